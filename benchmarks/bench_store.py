"""The stores side by side, each figure beside its baseline measured in the same run (issue 14).

    .venv/bin/python benchmarks/bench_store.py [--runs 40] [--claim-runs 400] [--calls 10000]

1. Noop runs per second with 1, 2, 4 and 8 `agentctl worker` processes on PostgreSQL; the
   ratio to 1 worker beside the machine's own 2-process CPU scaling (the ceiling on 2 cores).
   Target: 2 workers >= 1.7x of 1, and no loss beyond 2.
2. Claim latency (`lease_run`, which also reclaims expired leases) p50/p95 with 8 processes
   contending for the same queue, on PostgreSQL and on SQLite.
3. 10,000 tool calls recorded through the ledger on PostgreSQL vs the same on SQLite.
   Target <= 2x.

PostgreSQL 15 is started for the run (initdb + pg_ctl in a temporary folder, as the tests do).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from calls import record_fs_writes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.pg_server import PostgresServer  # noqa: E402 - the tests' throw-away server

AGENTCTL = str(Path(sys.executable).parent / "agentctl")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def line(name: str, value: float, baseline: float | None, unit: str, target: str) -> None:
    ratio = f"{value / baseline:5.2f}x" if baseline else "      "
    base = f"{baseline:8.3f} {unit}" if baseline is not None else " " * 10
    print(f"{name:<52} {value:8.3f} {unit}  baseline {base}  {ratio}  target {target}",
          flush=True)


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("bench\n")
    subprocess.run("git init -q -b main && git add -A && git commit -qm init", shell=True,
                   cwd=repo, check=True, env=ENV)
    return repo


def home_for(root: Path, name: str, url: str | None):  # type: ignore[no-untyped-def]
    from agentctl.home import Home, resolve_home

    home = resolve_home(str(root / name))
    return home if url is None else Home(root=home.root, database_url=url)


def queue_runs(home, repo: Path, count: int) -> list[str]:  # type: ignore[no-untyped-def]
    from agentctl import config
    from agentctl.domain.agent import AgentKind, AgentSpec
    from agentctl.services.actions.requests import TaskRequest
    from agentctl.services.actions.tasks import submit_task
    from agentctl.services.lifecycle.runs import create_run
    from agentctl.store.storage import Store

    store = Store(home)
    settings = config.defaults()
    task = submit_task(store, settings, TaskRequest(repository=str(repo), task_type="custom",
                       instruction="bench"), cwd=repo.parent)
    return [create_run(store, settings, task.task_id, agent=AgentSpec(AgentKind.NOOP)).run_id
            for _ in range(count)]


# --- 1. throughput ------------------------------------------------------------------------------
def _spin(seconds_of_work: int) -> None:
    total = 0
    for number in range(seconds_of_work):
        total += number * number


def cpu_scaling() -> float:
    """How much more CPU work 2 processes get done in the same time than 1 (2.0 is perfect):
    the ceiling for 2 workers on this machine, as busy as it is right now."""
    work = 30_000_000
    spawn = multiprocessing.get_context("spawn")

    def wall(processes: int) -> float:
        started = time.perf_counter()
        running = [spawn.Process(target=_spin, args=(work,)) for _ in range(processes)]
        for process in running:
            process.start()
        for process in running:
            process.join()
        return time.perf_counter() - started

    return 2 * wall(1) / wall(2)


def throughput(server: PostgresServer, root: Path, repo: Path, workers: int, count: int) -> float:
    """Runs per second while the workers work: from the first lease to the last run's end, as
    the database recorded them (the workers' interpreter start-up is not the store's cost)."""
    from agentctl.store.views import Views

    url = server.database()
    home = home_for(root, f"tp-{workers}", url)
    queue_runs(home, repo, count)
    env = {**ENV, "AGENTCTL_HOME": str(home.root), "AGENTCTL_DATABASE_URL": url,
           "TMPDIR": str(root)}
    processes = [subprocess.Popen([AGENTCTL, "worker", "--once", "--poll", "0.05"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(workers)]
    for process in processes:
        assert process.wait(timeout=900) == 0
    with Views(home) as views:
        span = views.attempt_span()
    first, last = (datetime.fromisoformat(str(at)) for at in span)
    return count / (last - first).total_seconds()


# --- 2. claim latency ---------------------------------------------------------------------------
def _claimer(url: str, home_root: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from agentctl.home import Home
    from agentctl.services.lifecycle.runs import lease_run
    from agentctl.store.storage import Store

    store = Store(Home(root=Path(home_root), database_url=url))
    store.ensure_schema()
    latencies = []
    while True:
        started = time.perf_counter()
        lease = lease_run(store, worker_id=f"bench-{os.getpid()}", ttl_seconds=3600)
        latencies.append(time.perf_counter() - started)
        if lease is None:
            break
    out.put(latencies)


def claim_latency(home, repo: Path, claimers: int, runs: int) -> tuple[float, float, int]:  # type: ignore[no-untyped-def]
    queue_runs(home, repo, runs)
    spawn = multiprocessing.get_context("spawn")  # fresh interpreters: no inherited connections
    out = spawn.Queue()
    processes = [spawn.Process(target=_claimer, args=(home.database_url, str(home.root), out))
                 for _ in range(claimers)]
    for process in processes:
        process.start()
    latencies = [value for _ in processes for value in out.get(timeout=600)]
    for process in processes:
        process.join()
    ordered = sorted(latencies)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return statistics.median(ordered), p95, len(ordered)


# --- 3. recording -------------------------------------------------------------------------------
def record_calls(home, repo: Path, calls: int) -> float:  # type: ignore[no-untyped-def]
    from agentctl.services.lifecycle.ledger import Ledger
    from agentctl.services.lifecycle.runs import lease_run
    from agentctl.store.storage import Store
    from agentctl.store.views import Views

    (run_id,) = queue_runs(home, repo, 1)
    store = Store(home)
    lease = lease_run(store, worker_id="bench", ttl_seconds=3600, run_id=run_id)
    assert lease is not None
    with Views(home) as views:
        spec_digest = views.run(run_id).spec_digest
    ledger = Ledger(store, lease, spec_digest=spec_digest)
    return record_fs_writes(ledger, calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="noop runs per worker count")
    parser.add_argument("--claim-runs", type=int, default=400)
    parser.add_argument("--calls", type=int, default=10_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="agentctl-bench-store-"))
    os.chmod(root, 0o755)
    server = PostgresServer().start()
    try:
        repo = make_repo(root)
        print(f"{os.cpu_count()} CPUs; PostgreSQL 15 on 127.0.0.1:{server.port}", flush=True)

        ceiling = cpu_scaling()
        rates = {n: throughput(server, root, repo, n, args.runs) for n in (1, 2, 4, 8)}
        print(f"{'(ceiling) this machine: 2 processes of CPU work vs 1':<52} "
              f"{ceiling:8.2f} x", flush=True)
        for n, rate in rates.items():
            target = "baseline" if n == 1 else (">= 1.7x of 1" if n == 2 else ">= rate of 2")
            line(f"noop runs/s, {n} worker(s), PostgreSQL", rate, rates[1], "/s", target)

        for name, url in (("PostgreSQL", server.database()), ("SQLite", None)):
            home = home_for(root, f"claims-{name}", url)
            p50, p95, count = claim_latency(home, repo, 8, args.claim_runs)
            print(f"{f'claim latency, 8 contending processes, {name}':<52} p50 {p50 * 1000:7.2f} ms"
                  f"   p95 {p95 * 1000:7.2f} ms   ({count} claims)", flush=True)

        sqlite = record_calls(home_for(root, "rec-sqlite", None), repo, args.calls)
        postgres = record_calls(home_for(root, "rec-pg", server.database()), repo, args.calls)
        line(f"record {args.calls} tool calls, SQLite", sqlite, None, "s ", "")
        line(f"record {args.calls} tool calls, PostgreSQL vs SQLite", postgres, sqlite, "s ",
             "<= 2x")
    finally:
        server.destroy()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
