"""Faults a worker outlives: a PostgreSQL blip under a held lease, a full disk, a read-only
artifact store. Real `agentctl worker` processes, the session's own PostgreSQL server (stopped
and restarted here: a test process runs one test at a time, so no other test sees the gap), and
a real tmpfs for the disk that fills up (the tests run as root)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.e2e.workers_support import Fleet, Worker, attempt_summary, clean_stderr, wait_until
from tests.pg_server import PostgresServer


def test_a_3_s_postgresql_outage_under_a_held_lease_is_outlived_by_the_same_attempt(
        fleet: Fleet, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCTL_DATABASE_URL", raising=False)
    fleet.bench.config(
        "[sandbox]\nmode = 'off'\n[budget]\nmax_attempts = 2\nbackoff_initial_seconds = 0\n"
        "[worker]\nlease_ttl_seconds = 12\npoll_seconds = 0.1\n"
        "[verification]\ncommands = ['true']\nbaseline = 'never'\nreruns = 0\n"
        f"[store]\nurl = '{postgres.database()}'\n")
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=16, later=0))
    worker = fleet.start_worker("--once")
    wait_until(fleet.agent_pids, timeout=60, what="the agent to start")
    time.sleep(0.5)  # a heartbeat and some cancel polls on the way
    postgres.stop("fast")
    try:
        time.sleep(3)
    finally:
        postgres.restart()

    assert worker.wait(timeout=120) == 0, worker.stderr()
    clean_stderr(worker.stderr())
    tree = fleet.tree(run_id)
    assert tree["status"] == "COMPLETED"
    assert attempt_summary(tree) == [(1, "COMPLETED", None)]  # no second attempt
    assert len(fleet.agent_pids()) == 1


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A small tmpfs mounted on `path` for the test (unmounted after, pass or fail)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                   check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder: Path) -> Path:
    """A file taking every free byte of `folder`'s file system; delete it to make room."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as out:
        for chunk in (1 << 20, 4096, 1):
            try:
                while True:
                    out.write(b"\0" * chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
    return filler


def meets_fault(worker: Worker, *words: str) -> None:
    """Wait until the worker's stderr names the fault, then check it is still alive a second
    later. A stretch of clock on purpose: the worker is busy (retrying the store, or its
    attempt waiting for it), so there is no event to wait for, only an exit that must not
    come; what the test asserts next (the same attempt's heartbeats, the next run done) shows
    it carried on."""
    wait_until(lambda: any(word in worker.stderr() for word in words), timeout=60,
               what=f"the worker to meet {words}")
    time.sleep(1)
    assert worker.process.poll() is None, worker.stderr()


def queue(fleet: Fleet, task_id: str, agent: str) -> str:
    """`run start --detach` beside a running worker (which may lease it at once)."""
    return str(fleet.json("run", "start", task_id, "--agent", agent, "--detach")["runId"])


def finishes(fleet: Fleet, run_id: str) -> str:
    return str(wait_until(lambda: fleet.status(run_id) in ("COMPLETED", "FAILED")
                          and fleet.status(run_id), timeout=120, what=f"{run_id} to end"))


def test_a_full_disk_ends_the_attempt_and_the_worker_runs_the_next_run_once_space_is_back(
        fleet: Fleet) -> None:
    with tmpfs(fleet.bench.home, "16m") as home:
        fleet.configure(max_attempts=3)
        task_id = fleet.submit()
        first = fleet.queue(task_id, fleet.hanging_plan(first=3, later=0))
        worker = fleet.start_worker()
        fleet.wait_for_agent(run_id=first)
        filler = fill(home)

        meets_fault(worker, "No space left on device", "database or disk is full")
        filler.unlink()
        second = queue(fleet, task_id, fleet.writing_plan())

        assert finishes(fleet, second) == "COMPLETED"
        assert finishes(fleet, first) in ("COMPLETED", "FAILED")
        assert worker.process.poll() is None, worker.stderr()
        clean_stderr(worker.stderr())
        assert "corrupt" not in worker.stderr()
        fleet.audit_ok()


def test_an_artifact_store_read_only_for_a_few_seconds_is_waited_out_by_the_same_attempt(
        fleet: Fleet) -> None:
    artifacts = fleet.bench.root / "artifacts"
    with tmpfs(artifacts, "64m"):
        fleet.configure(max_attempts=1)
        config = fleet.bench.cwd / ".agentctl.toml"
        config.write_text(config.read_text() + f"[store]\nartifacts = '{artifacts}'\n"
                          "artifact_outage_seconds = 600\n")
        run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=3, later=0))
        worker = fleet.start_worker("--once")
        fleet.wait_for_agent(run_id=run_id)
        subprocess.run(["mount", "-o", "remount,ro", str(artifacts)], check=True)
        try:
            meets_fault(worker, "artifact store cannot be written")
            fleet.heartbeats(run_id, 3)  # the lease kept while the attempt waits
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(artifacts)], check=True)

        assert worker.wait(timeout=120) == 0, worker.stderr()
    clean_stderr(worker.stderr())
    assert worker.stderr().count("artifact store cannot be written") == 1
    tree = fleet.tree(run_id)
    assert tree["status"] == "COMPLETED", tree
    assert attempt_summary(tree) == [(1, "COMPLETED", None)]  # the same attempt, no lease lost


def test_an_artifact_store_full_while_a_log_is_stored_is_waited_out_by_the_same_attempt(
        fleet: Fleet) -> None:
    """The store fills up while the verifier runs: its log, redacted into a staging file of
    the store, meets the full disk, and the whole write waits for room like any other."""
    artifacts = fleet.bench.root / "artifacts"
    with tmpfs(artifacts, "16m"):
        fleet.configure(max_attempts=1, verify=[
            f"{fleet.hanging_command(first=2, later=0)} && echo the verifier said this"])
        config = fleet.bench.cwd / ".agentctl.toml"
        config.write_text(config.read_text() + f"[store]\nartifacts = '{artifacts}'\n"
                          "artifact_outage_seconds = 600\n")
        run_id = fleet.queue(fleet.submit(), fleet.writing_plan())
        worker = fleet.start_worker("--once")
        fleet.wait_for_agent(run_id=run_id, status="VERIFYING")
        filler = fill(artifacts)
        try:  # the log's write waits (warned), or, failing, ends the attempt and the worker
            wait_until(lambda: "cannot be written" in worker.stderr()
                       or worker.process.poll() is not None, timeout=60,
                       what="the verifier's log to meet the full store")
            time.sleep(1)
        finally:
            filler.unlink()
        assert worker.wait(timeout=120) == 0, worker.stderr()
    clean_stderr(worker.stderr())
    assert worker.stderr().count("artifact store cannot be written") == 1
    tree = fleet.tree(run_id)
    assert tree["status"] == "COMPLETED", tree
    assert attempt_summary(tree) == [(1, "COMPLETED", None)]


def test_a_read_only_artifact_store_fails_the_attempt_and_the_worker_runs_the_next_run(
        fleet: Fleet) -> None:
    """Read-only for longer than `[store] artifact_outage_seconds`."""
    artifacts = fleet.bench.root / "artifacts"
    with tmpfs(artifacts, "64m"):
        fleet.configure(max_attempts=1)
        config = fleet.bench.cwd / ".agentctl.toml"
        config.write_text(config.read_text() + f"[store]\nartifacts = '{artifacts}'\n"
                          "artifact_outage_seconds = 1\n")
        task_id = fleet.submit()
        first = fleet.queue(task_id, fleet.hanging_plan(first=3, later=0))
        worker = fleet.start_worker()
        fleet.wait_for_agent(run_id=first)
        idles = worker.idles()
        subprocess.run(["mount", "-o", "remount,ro", str(artifacts)], check=True)

        # the attempt fails once the store has been read-only for a second, and the worker,
        # with nothing left to lease, waits for work instead of exiting
        worker.wait_idle(more_than=idles, timeout=60)
        assert "Read-only file system" in worker.stderr()
        assert fleet.status(first) == "FAILED"
        subprocess.run(["mount", "-o", "remount,rw", str(artifacts)], check=True)
        second = queue(fleet, task_id, fleet.writing_plan())

        assert finishes(fleet, second) == "COMPLETED"
        assert worker.process.poll() is None, worker.stderr()
        clean_stderr(worker.stderr())
        tree = fleet.tree(first)
        assert tree["verdict"]["status"] == "FAILED_INFRASTRUCTURE"
        assert "Read-only file system" in tree["attempts"][0]["endReason"]


def test_a_command_on_a_full_disk_names_the_full_disk_not_a_corrupt_file(fleet: Fleet) -> None:
    with tmpfs(fleet.bench.home, "8m") as home:
        fleet.configure()
        fleet.submit()
        filler = fill(home)
        for _ in range(100):  # the first few may still fit in the log's free pages
            result = fleet.cli("task", "submit", "--repo", str(fleet.repo), "--type",
                               "refactor", "--instruction", "y" * 4000, expect=(0, 2))
            if result.returncode:
                break
        filler.unlink()
    assert result.returncode == 2
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, result.stderr
    assert "full" in line or "No space left" in line, line
    assert "corrupt" not in line


def test_reads_work_on_a_full_disk(fleet: Fleet) -> None:
    """`audit verify`, `run show` and `run list` only read: a disk with no byte free (which
    refuses the SQLite reader's shared WAL index) still lets them, also when a killed run's
    lease has run out (requeuing it would be a write: the next command that can write does)."""
    with tmpfs(fleet.bench.home, "16m") as home:
        fleet.configure()
        run_id = fleet.json("run", "start", fleet.submit(), "--agent",
                            fleet.writing_plan())["runId"]
        doomed = fleet.start_process("run", "start", fleet.submit(), "--agent",
                                     fleet.hanging_plan(first=30, later=0))
        wait_until(lambda: len(fleet.query("SELECT run_id FROM run")) == 2, timeout=30,
                   what="the inline run to be created")
        killed = str(fleet.query("SELECT run_id FROM run WHERE run_id != ?", run_id)[0][0])
        agent_pid = fleet.wait_for_agent(run_id=killed)
        doomed.signal_group(signal.SIGKILL)
        doomed.wait(timeout=10)
        os.kill(agent_pid, signal.SIGKILL)
        leases = fleet.query("SELECT lease_expires_at FROM attempt WHERE run_id = ?", killed)
        ends = max(datetime.fromisoformat(str(row[0])) for row in leases)
        wait_until(lambda: datetime.now(timezone.utc) > ends, timeout=30,
                   what="the killed run's lease to run out")
        filler = fill(home)
        try:
            verified = fleet.cli("audit", "verify", expect=None)
            shown = fleet.cli("run", "show", run_id, expect=None)
            listed = fleet.cli("run", "list", expect=None)
        finally:
            filler.unlink()
        requeued = fleet.cli("run", "show", killed)
    assert "was requeued" in requeued.stderr  # once the disk has room again
    assert (verified.returncode, verified.stderr) == (0, ""), verified.stderr
    assert verified.stdout.startswith("ok"), verified.stdout
    assert (shown.returncode, shown.stderr) == (0, ""), shown.stderr
    assert run_id in shown.stdout and "COMPLETED" in shown.stdout
    assert (listed.returncode, listed.stderr) == (0, ""), listed.stderr
    assert run_id[:8] in listed.stdout
