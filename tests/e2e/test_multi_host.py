"""Several hosts, one PostgreSQL: worker "hosts" are Linux network namespaces with addresses of
their own, joined to the test's side by veth pairs on a bridge where PostgreSQL listens. The
state home (its config and artifacts) is a folder every host sees, as a shared filesystem is.

- 4 workers on 3 hosts drain 60 queued noop runs: every run exactly one attempt, no lease taken
  twice, the event chain intact.
- kill -9 of a host's worker mid-run: LEASE_EXPIRED, and a new attempt on another host.
- a host whose link is cut mid-run for a few seconds: its worker waits for the database and
  finishes the run in the same attempt, writing nothing outside its lease.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.workers_support import Fleet, Worker, attempt_summary, clean_stderr, fleet_at
from tests.e2e.workers_support import wait_until as wait_for
from tests.pg_server import PostgresServer

HOSTS = 3
TAG = f"ag{os.getpid() % 100000}"
SUBNET = f"10.{200 + os.getpid() % 50}.{os.getpid() % 250}"


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@dataclass
class Network:
    """A bridge on the test's side (`.1`) and HOSTS namespaces on it (`.11`, `.12`, ...)."""

    bridge: str
    gateway: str
    namespaces: list[str]

    def link(self, host: int) -> str:
        return f"{TAG}v{host}"  # the host-side end of that namespace's veth pair


@pytest.fixture(scope="module")
def network() -> Iterator[Network]:
    bridge, namespaces = f"{TAG}br", [f"{TAG}h{i}" for i in range(1, HOSTS + 1)]
    try:
        ip("link", "add", bridge, "type", "bridge")
        ip("addr", "add", f"{SUBNET}.1/24", "dev", bridge)
        ip("link", "set", bridge, "up")
        for number, namespace in enumerate(namespaces, start=1):
            outer, inner = f"{TAG}v{number}", f"{TAG}p{number}"
            ip("netns", "add", namespace)
            ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            ip("link", "set", inner, "netns", namespace)
            ip("link", "set", outer, "master", bridge)
            ip("link", "set", outer, "up")
            ip("-n", namespace, "addr", "add", f"{SUBNET}.{10 + number}/24", "dev", inner)
            ip("-n", namespace, "link", "set", inner, "up")
            ip("-n", namespace, "link", "set", "lo", "up")
        yield Network(bridge, f"{SUBNET}.1", namespaces)
    finally:
        for number, namespace in enumerate(namespaces, start=1):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
            subprocess.run(["ip", "link", "del", f"{TAG}v{number}"], capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)


@pytest.fixture(scope="module")
def server(network: Network) -> Iterator[PostgresServer]:
    """PostgreSQL listening on the bridge: reachable from every namespace, and from here."""
    postgres = PostgresServer(listen=network.gateway).start()
    yield postgres
    postgres.destroy()


@pytest.fixture
def fleet(tmp_path: Path, run_agentctl: Callable[..., Any], agentctl_executable: str,
          server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fleet]:
    monkeypatch.delenv("AGENTCTL_DATABASE_URL", raising=False)
    with fleet_at(tmp_path, run_agentctl, agentctl_executable) as built:
        built.database_url = server.database()  # type: ignore[attr-defined]
        yield built


def configure(fleet: Fleet, *, ttl: float) -> None:
    fleet.bench.config(
        "[budget]\nmax_attempts = 2\nbackoff_initial_seconds = 0\n"
        f"[worker]\nlease_ttl_seconds = {ttl:g}\npoll_seconds = 0.2\n"
        "[verification]\ncommands = ['true']\n"
        # The test watches each agent's pid on the host, which a sandbox's pid namespace hides.
        "[sandbox]\nmode = 'off'\n"
        f"[store]\nurl = '{fleet.database_url}'\n")  # type: ignore[attr-defined]


def start_worker(fleet: Fleet, namespace: str, *args: str) -> Worker:
    """`agentctl worker ARGS` on a host: in its network namespace, its own process group."""
    stderr_path = fleet.bench.root / f"worker-{len(fleet.workers) + 1}-{namespace}.stderr"
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(
            ["ip", "netns", "exec", namespace, fleet.executable, "worker", *args],
            cwd=fleet.bench.cwd, env=fleet.env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    worker = Worker(process, stderr_path)
    fleet.workers.append(worker)
    return worker


def rows(fleet: Fleet, sql: str, *params: object) -> list[tuple[Any, ...]]:
    import psycopg

    url = fleet.database_url.replace("postgresql+psycopg://", "postgresql://")  # type: ignore[attr-defined]
    with psycopg.connect(url) as connection:
        return list(connection.execute(sql, params).fetchall())


def test_four_workers_on_three_hosts_run_every_queued_run_exactly_once(
        fleet: Fleet, network: Network) -> None:
    configure(fleet, ttl=15)
    run_ids = fleet.queue_many(fleet.submit(), 60)
    hosts = [network.namespaces[i % HOSTS] for i in range(4)]
    workers = [start_worker(fleet, host, "--once") for host in hosts]
    host_of = {worker.worker_id(): host for worker, host in zip(workers, hosts, strict=True)}
    for worker in workers:
        assert worker.wait(timeout=300) == 0, worker.stderr()
        clean_stderr(worker.stderr())

    attempts = rows(fleet, "SELECT run_id, worker_id, status FROM attempt")
    assert Counter(run for run, _, _ in attempts) == Counter(run_ids)  # one attempt per run
    assert {status for _, _, status in attempts} == {"COMPLETED"}
    leases = rows(fleet, "SELECT run_id FROM event WHERE type = 'LeaseAcquired'")
    assert Counter(run for (run,) in leases) == Counter(run_ids)  # no lease taken twice
    verdicts = rows(fleet, "SELECT run.status, verdict.status, count(*) FROM run "
                           "JOIN verdict ON verdict.run_id = run.run_id "
                           "GROUP BY run.status, verdict.status")
    assert verdicts == [("FAILED", "FAILED_AGENT_COULD_NOT_COMPLETE", 60)]  # noop: no patch
    assert {host_of[worker] for _, worker, _ in attempts} == set(network.namespaces)
    fleet.audit_ok()


def test_a_killed_host_worker_loses_its_run_to_another_host(
        fleet: Fleet, network: Network) -> None:
    configure(fleet, ttl=2)
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=60, later=0))
    doomed = start_worker(fleet, network.namespaces[0])
    doomed_id = doomed.worker_id()
    agent_pid = wait_for(lambda: fleet.agent_pids() and fleet.agent_pids()[0], timeout=60,
                         what="the agent of attempt 1")
    doomed.signal_group(signal.SIGKILL)
    doomed.wait(timeout=10)
    os.kill(agent_pid, signal.SIGKILL)  # a crashed machine takes its agent down too

    rescuer = start_worker(fleet, network.namespaces[1], "--once")
    rescuer_id = rescuer.worker_id()
    assert rescuer.wait(timeout=120) == 0, rescuer.stderr()
    clean_stderr(rescuer.stderr())

    tree = fleet.tree(run_id)
    assert tree["status"] == "COMPLETED"
    assert attempt_summary(tree) == [(1, "LEASE_EXPIRED", "lease_expired"),
                                     (2, "COMPLETED", None)]
    assert [a["workerId"] for a in tree["attempts"]] == [doomed_id, rescuer_id]
    fleet.audit_ok()


def test_a_host_cut_off_mid_run_waits_for_the_database_and_finishes_its_attempt(
        fleet: Fleet, network: Network) -> None:
    configure(fleet, ttl=20)
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=3, later=0))
    worker = start_worker(fleet, network.namespaces[2], "--once")
    wait_for(lambda: fleet.agent_pids(), timeout=60, what="the agent to start")
    link = network.link(3)
    ip("link", "set", link, "down")  # the host's cable is pulled while its agent works
    try:
        time.sleep(5)
        cut_off = rows(fleet, "SELECT count(*) FROM step WHERE run_id = %s", run_id)
    finally:
        ip("link", "set", link, "up")
    assert worker.wait(timeout=120) == 0, worker.stderr()
    clean_stderr(worker.stderr())

    tree = fleet.tree(run_id)
    assert tree["status"] == "COMPLETED"
    assert attempt_summary(tree) == [(1, "COMPLETED", None)]
    steps = rows(fleet, "SELECT count(*) FROM step WHERE run_id = %s", run_id)
    assert steps[0][0] > cut_off[0][0]  # its later steps landed once it was back
    assert rows(fleet, "SELECT fenced_writes FROM attempt")[0][0] > 0
    fleet.audit_ok()


def test_a_frozen_host_worker_that_wakes_after_its_lease_expired_writes_nothing(
        fleet: Fleet, network: Network) -> None:
    configure(fleet, ttl=2)
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=60, later=0))
    frozen = start_worker(fleet, network.namespaces[0], "--once")
    frozen_id = frozen.worker_id()
    agent_pid = wait_for(lambda: fleet.agent_pids() and fleet.agent_pids()[0], timeout=60,
                         what="the agent of attempt 1")
    frozen.signal_group(signal.SIGSTOP)
    try:
        rescuer = start_worker(fleet, network.namespaces[1], "--once")
        assert rescuer.wait(timeout=120) == 0, rescuer.stderr()
        before = rows(fleet, "SELECT a.attempt_number, a.fenced_writes, count(s.step_id) "
                             "FROM attempt a LEFT JOIN step s ON s.attempt_id = a.attempt_id "
                             "GROUP BY a.attempt_number, a.fenced_writes ORDER BY 1")
        events_before = rows(fleet, "SELECT count(*) FROM event")
    finally:
        frozen.signal_group(signal.SIGCONT)
    frozen.wait(timeout=120)
    wait_for(lambda: not os.path.exists(f"/proc/{agent_pid}") or
             open(f"/proc/{agent_pid}/stat").read().split()[2] == "Z", timeout=30,
             what="the frozen worker's agent to be stopped")

    after = rows(fleet, "SELECT a.attempt_number, a.fenced_writes, count(s.step_id) "
                        "FROM attempt a LEFT JOIN step s ON s.attempt_id = a.attempt_id "
                        "GROUP BY a.attempt_number, a.fenced_writes ORDER BY 1")
    assert after == before  # not a step, not a fenced write more from the woken worker
    assert rows(fleet, "SELECT count(*) FROM event") == events_before
    tree = fleet.tree(run_id)
    assert tree["status"] == "COMPLETED"
    assert attempt_summary(tree) == [(1, "LEASE_EXPIRED", "lease_expired"),
                                     (2, "COMPLETED", None)]
    assert tree["attempts"][0]["workerId"] == frozen_id
    fleet.audit_ok()
