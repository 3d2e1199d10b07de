"""The cost of cleaning up after kill -9 (issue 25), each figure beside a baseline run alongside.

    python benchmarks/bench_leftovers.py            # 1,000 stale directories, 20,000 old attempts

1. The sweep at worker start: 1,000 directories of ended attempts in the temp dir, among 20,000
   attempts on record. Baseline: `shutil.rmtree` of the same directories, found by name with no
   store lookup. Target: <= 1 s before the worker works; the sweep runs in a thread beside it
   (`sweep_in_background`), so that is the time to start the thread; the whole sweep, which
   the disk sets, is shown too.
2. What noticing an expired foreground run adds to `run show` / `run list` / `run start` when
   nothing expired (the usual case): one indexed read. Baseline: the read `run list` does anyway
   (50 runs). Target: <= 10 ms per command.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentctl.domain.clock import to_iso, utcnow
from agentctl.execution.workspaces.discard import ATTEMPT_DIR_PREFIX
from agentctl.home import resolve_home
from agentctl.services.lifecycle.leftovers import notice_expired
from agentctl.services.lifecycle.sweep import sweep_in_background
from agentctl.store import tables
from agentctl.store.storage import Store
from agentctl.store.views import Views


def seed(store: Store, parent: Path, *, stale: int, history: int) -> list[Path]:
    """`history` ended attempts on record, `stale` of them with a directory left in `parent`
    (a killed clone's few files each)."""
    from agentctl.store.engine import engine_for

    now = to_iso(utcnow())
    rows, directories = [], []
    for number in range(history):
        directory = None
        if number < stale:
            path = parent / f"{ATTEMPT_DIR_PREFIX}{number:06d}"
            for sub in ("scratch", "git-home", "repo", "base.git"):
                (path / sub).mkdir(parents=True)
            for name in ("repo/README.md", "scratch/task.md", "base.git/HEAD"):
                (path / name).write_text("x" * 200)
            directories.append(path)
            directory = str(path.resolve())
        rows.append({"attempt_id": f"attempt_{number:08d}", "run_id": f"run_{number:08d}",
                     "attempt_number": 1, "worker_id": "bench", "lease_id": f"lease_{number}",
                     "status": "LEASE_EXPIRED", "started_at": now, "last_heartbeat_at": now,
                     "lease_expires_at": now, "ended_at": now, "fenced_writes": 0,
                     "directory": directory})
    store.ensure_schema()
    with engine_for(store.home.database_url).begin() as connection:
        connection.execute(tables.attempt.insert(), rows)
    return directories


def sweep_figures(root: Path, stale: int, history: int, rounds: int) -> None:
    baseline, ours, blocked = [], [], []
    for number in range(rounds):
        for name in (("baseline", "ours") if number % 2 == 0 else ("ours", "baseline")):
            folder = root / f"{name}-{number}"
            home = resolve_home(str(folder / "home"))
            parent = folder / "tmp"
            parent.mkdir(parents=True)
            seed(Store(home), parent, stale=stale, history=history)
            started = time.perf_counter()
            if name == "baseline":
                for path in parent.glob(f"{ATTEMPT_DIR_PREFIX}*"):
                    shutil.rmtree(path)
                baseline.append(time.perf_counter() - started)
            else:
                tempfile.tempdir = str(parent)  # where the worker's sweep looks
                heard: list[str] = []
                thread = sweep_in_background(Store(home), heard.append)
                blocked.append(time.perf_counter() - started)
                thread.join()
                ours.append(time.perf_counter() - started)
                tempfile.tempdir = None
                assert heard == [f"removed {stale} directories of attempts that had ended"], heard
                assert not any(parent.iterdir())
            shutil.rmtree(folder)
    base, mine, wait = (statistics.median(baseline), statistics.median(ours),
                        statistics.median(blocked))
    print(f"sweep at worker start: {stale} stale directories, {history} attempts on record "
          f"(median of {rounds})")
    print(f"  rmtree by name, no lookup (baseline)    {base:8.3f} s  1.00x")
    print(f"  the whole sweep (in its thread)         {mine:8.3f} s  {mine / base:5.2f}x")
    print(f"  the worker's wait for it                {wait:8.3f} s  {wait / base:5.2f}x"
          "   target <= 1 s")


def notice_figures(root: Path, history: int, calls: int) -> None:
    home = resolve_home(str(root / "notice" / "home"))
    store = Store(home)
    seed(store, root / "notice", stale=0, history=history)
    baseline, ours = [], []
    for _ in range(calls):
        started = time.perf_counter()
        with Views(home) as views:
            views.runs(limit=50)
        baseline.append(time.perf_counter() - started)
        started = time.perf_counter()
        notice_expired(store)
        ours.append(time.perf_counter() - started)
    base, mine = statistics.median(baseline), statistics.median(ours)
    print(f"noticing an expired foreground run, nothing expired ({history} attempts on record, "
          f"median of {calls})")
    print(f"  run list's own read of 50 runs (baseline) {base * 1000:7.2f} ms  1.00x")
    print(f"  notice_expired                           {mine * 1000:7.2f} ms  {mine / base:5.2f}x"
          "   target <= 10 ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stale", type=int, default=1000)
    parser.add_argument("--history", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentctl-bench-leftovers-") as scratch:
        root = Path(scratch)
        sweep_figures(root, options.stale, options.history, options.rounds)
        notice_figures(root, options.history, 200)


if __name__ == "__main__":
    main()
