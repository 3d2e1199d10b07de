"""Workers on one SQLite store, beside a single worker measured in the same run (issue 4).

    .venv/bin/python benchmarks/bench_workers.py [--runs 24] [--leases 200] [--only collector]

1. Throughput: N queued `noop` runs (verification `true`) drained by 1 worker, then another N by
   2 workers at once; runs per second and their ratio (target: 2 workers >= 1.6x one).
   Beside it, the same ratio for two plain CPU-bound processes: what the machine can give,
   and for two workers each draining N runs from a state home of its own: what sharing one
   store costs, apart from what two runs at once cost the machine.
2. Lease latency under contention: 4 processes lease from one queue of M runs as fast as they
   can; the time each `lease_run` call takes (median, p95, max), and how many failed (target:
   no `database is locked` ever).
3. A dead trace collector: N runs drained by 1 worker whose OTLP endpoint is a closed port,
   beside N drained by 1 worker with no endpoint; the ratio of their times (target: <= 1.1x),
   and the same for a collector that takes connections and never answers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTCTL = str(Path(sys.executable).parent / "agentctl")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def setup(root: Path) -> tuple[Path, str]:
    root.mkdir(exist_ok=True)
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("bench\n")
    subprocess.run("git init -q -b main && git add -A && git commit -qm init", shell=True,
                   cwd=repo, check=True, env=ENV)
    home = root / "home"
    out = subprocess.run([AGENTCTL, "--home", str(home), "task", "submit", "--repo", str(repo),
                          "--type", "custom", "--instruction", "bench", "--verify", "true",
                          "--json"], check=True, capture_output=True, text=True, env=ENV).stdout
    return home, json.loads(out)["taskId"]


def queue(home: Path, task_id: str, count: int) -> None:
    from agentctl import config
    from agentctl.domain.agent import AgentKind, AgentSpec
    from agentctl.home import resolve_home
    from agentctl.services.lifecycle.runs import create_run
    from agentctl.store.storage import Store

    store = Store(resolve_home(str(home)))
    for _ in range(count):
        create_run(store, config.defaults(), task_id, agent=AgentSpec(kind=AgentKind.NOOP))


def drain(home: Path, workers: int, *, homes: tuple[Path, ...] = (),
          env: dict[str, str] | None = None) -> float:
    """Seconds until `workers` workers on `home` (or one on each of `homes`) find no run left."""
    started = time.perf_counter()
    processes = [subprocess.Popen([AGENTCTL, "--home", str(where), "worker", "--once",
                                   "--poll", "0.05"], env=env or ENV, stderr=subprocess.DEVNULL)
                 for where in (homes or (home,) * workers)]
    for process in processes:
        process.wait()
    return time.perf_counter() - started


LEASER = """
import json, sys, time
from agentctl.services.lifecycle.runs import lease_run
from agentctl.store.storage import Store
from agentctl.home import resolve_home
store = Store(resolve_home(sys.argv[1]))
timings, errors = [], []
while True:
    started = time.perf_counter()
    try:
        lease = lease_run(store, worker_id=sys.argv[2], ttl_seconds=600)
    except Exception as error:  # counted, not hidden: the target is zero
        errors.append(repr(error))
        continue
    timings.append(time.perf_counter() - started)
    if lease is None:
        break
print(json.dumps({"timings": timings, "errors": errors}))
"""


def contention(home: Path, task_id: str, leases: int) -> None:
    queue(home, task_id, leases)
    processes = [subprocess.Popen([sys.executable, "-c", LEASER, str(home), f"bench-{n}"],
                                  stdout=subprocess.PIPE, text=True, env=ENV) for n in range(4)]
    results = [json.loads(p.communicate()[0]) for p in processes]
    timings = sorted(t for r in results for t in r["timings"])
    errors = [e for r in results for e in r["errors"]]
    p95 = timings[int(len(timings) * 0.95)]
    print(f"{'lease latency, 4 workers contending':<44} median {statistics.median(timings) * 1000:6.1f} ms"
          f"  p95 {p95 * 1000:6.1f} ms  max {timings[-1] * 1000:6.1f} ms  ({len(timings)} calls)")
    print(f"{'  errors (database is locked or other)':<44} {len(errors):6d}        target 0")


def collectors(home: Path, task_id: str, runs: int) -> None:
    """A worker whose collector is down (a closed port) or hangs (never accepted from) against
    one with no collector, each draining `runs` runs, best of 3 (a loaded machine's noise)."""
    with socket.socket() as closed, socket.socket() as hanging:
        closed.bind(("127.0.0.1", 0))
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(64)
        endpoints = {"none": None, "dead": closed.getsockname()[1],
                     "hanging": hanging.getsockname()[1]}
        times: dict[str, float] = {}
        for _ in range(3):
            for name, port in endpoints.items():
                env = dict(ENV)
                env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
                if port is not None:
                    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
                queue(home, task_id, runs)
                took = drain(home, 1, env=env)
                times[name] = min(times.get(name, took), took)
    none = times["none"]
    print(f"{'worker, no collector':<44} {none:8.2f} s for {runs} runs")
    for name in ("dead", "hanging"):
        print(f"{'worker, ' + name + ' collector':<44} {times[name]:8.2f} s   "
              f"{times[name] / none:5.2f}x  target <= 1.1x (dead)")


CPU_LOOP = "sum(range(30_000_000))"


def cpu_scaling() -> float:
    """How much this machine gives two CPU-bound processes over one: the ceiling for workers."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", CPU_LOOP], check=True)
    one = time.perf_counter() - started
    started = time.perf_counter()
    pair = [subprocess.Popen([sys.executable, "-c", CPU_LOOP]) for _ in range(2)]
    for process in pair:
        process.wait()
    return 2 * one / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--leases", type=int, default=200)
    parser.add_argument("--only", choices=["collector"], help="run only that figure")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="agentctl-bench-workers-"))
    try:
        home, task_id = setup(root)
        if args.only == "collector":
            collectors(home, task_id, args.runs)
            return
        queue(home, task_id, args.runs)
        one = args.runs / drain(home, 1)
        queue(home, task_id, args.runs)
        two = args.runs / drain(home, 2)
        print(f"{'noop runs per second, 1 worker':<44} {one:8.2f} runs/s")
        print(f"{'noop runs per second, 2 workers':<44} {two:8.2f} runs/s   {two / one:5.2f}x"
              f"  target >= 1.6x")
        print(f"{'  (this machine: 2 CPU-bound processes vs 1)':<44} {cpu_scaling():8.2f}x")
        other, other_task = setup(root / "other")
        queue(home, task_id, args.runs)
        queue(other, other_task, args.runs)
        apart = 2 * args.runs / drain(home, 2, homes=(home, other))
        print(f"{'  (2 workers, each on a state home of its own)':<44} {apart:8.2f} runs/s   "
              f"{apart / one:5.2f}x")
        contention(root / "contention-home", setup_task(root), args.leases)
        collectors(home, task_id, args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def setup_task(root: Path) -> str:
    home = root / "contention-home"
    out = subprocess.run([AGENTCTL, "--home", str(home), "task", "submit", "--repo",
                          str(root / "repo"), "--type", "custom", "--instruction", "bench",
                          "--json"], check=True, capture_output=True, text=True, env=ENV).stdout
    task_id: str = json.loads(out)["taskId"]
    return task_id


if __name__ == "__main__":
    main()
