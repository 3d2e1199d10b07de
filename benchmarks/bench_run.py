"""The run pipeline's costs beside baselines measured in the same run (issue 9 targets).

    .venv/bin/python benchmarks/bench_run.py [--calls 10000] [--repeat 3] [--log-mb 500]
                                             [--skip-log]

1. Recording: a script agent's tool calls (steps, tool calls, events) written through the
   recorder, vs raw sqlite3 `executemany` of the very same rows into an empty copy of the
   schema; the median of --repeat runs of each. Target <= 2.5x. Then the same recording with
   the rows' seals switched off (the writer's sealing replaced by nothing, here only): what
   sealing costs. Target <= 1.1x (issue 24).
2. `run show --tree` of that many-step run, as a fresh `agentctl` process. Target <= 0.4 s (issue 22).
3. A verifier printing LOG_MB of output: captured, hashed and stored as an artifact, vs
   `sh -c 'cmd > file'` of the same bytes. Target <= 4x, peak memory < 100 MB.
4. A `noop` run with verification `true`: everything besides the clone. Target < 0.8 s.

Workspace preparation on a 20,000-file repository is measured by bench_workspace.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from calls import record_fs_writes

AGENTCTL = str(Path(sys.executable).parent / "agentctl")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


CPU: list[float] = []  # process seconds of each recording and raw baseline, in turn


def line(name: str, value: float, baseline: float | None, unit: str, target: str) -> None:
    ratio = f"{value / baseline:5.2f}x" if baseline else "      "
    base = f"{baseline:8.3f} {unit}" if baseline is not None else " " * 10
    print(f"{name:<44} {value:8.3f} {unit}  baseline {base}  {ratio}  target {target}")


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("bench\n")
    subprocess.run("git init -q -b main && git add -A && git commit -qm init", shell=True,
                   cwd=repo, check=True, env=ENV)
    return repo


def bench_records(root: Path, calls: int, repeat: int) -> tuple[str, str]:
    """The median of `repeat` recordings (each a fresh run) beside the median of their raw
    baselines: the machine is shared, and one sample can land in someone else's busy second."""
    from agentctl import config
    from agentctl.home import resolve_home
    from agentctl.services.actions.requests import TaskRequest
    from agentctl.services.actions.tasks import submit_task
    from agentctl.store.storage import Store

    home = resolve_home(str(root / "home"))
    store = Store(home)
    settings = config.defaults()
    task = submit_task(store, settings, TaskRequest(repository=str(make_repo(root)),
                       task_type="custom", instruction="bench"), cwd=root)
    samples = [_record_once(root / f"raw-{attempt}.db", store, settings, task.task_id, calls)
               for attempt in range(repeat)]
    ours = statistics.median(sample[1] for sample in samples)
    raw = statistics.median(sample[2] for sample in samples)
    count = samples[-1][3]
    line(f"record {calls} tool calls ({count} rows)", ours, raw, "s ", "<= 2.5x")
    cpu_ours, cpu_raw = statistics.median(CPU[0::2]), statistics.median(CPU[1::2])
    line("  the same in CPU seconds (a busy machine)", cpu_ours, cpu_raw, "s ", "<= 2.5x")
    CPU.clear()
    if repeat > 1:
        print(f"{'  (each: ours / raw)':<44} "
              + "  ".join(f"{o:.3f}/{r:.3f}" for _, o, r, _ in samples))
    with _sealing_off():
        unsealed = [_record_once(root / f"raw-unsealed-{attempt}.db", store, settings,
                                 task.task_id, calls)[1] for attempt in range(repeat)]
    line("  the same with sealing off", ours, statistics.median(unsealed), "s ", "<= 1.1x")
    line("  the same with sealing off, CPU seconds", cpu_ours, statistics.median(CPU[0::2]),
         "s ", "<= 1.1x")
    CPU.clear()
    return samples[-1][0], str(root / "home")


@contextmanager
def _sealing_off() -> Iterator[None]:
    """The writer without its seals: no digest of the rows inserted, none read back and
    carried in the first event. For this measurement only; `audit verify` would flag the
    rows written so."""
    from agentctl.store import table_repository as repository
    from agentctl.store import uow

    inserted, seal = vars(repository)["inserted"], uow.UnitOfWork._seal
    setattr(repository, "inserted", lambda name, fields: lambda row: ("", ""))  # noqa: B010
    uow.UnitOfWork._seal = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        setattr(repository, "inserted", inserted)  # noqa: B010
        uow.UnitOfWork._seal = seal  # type: ignore[method-assign]


def _record_once(copy_path: Path, store, settings, task_id: str,  # type: ignore[no-untyped-def]
                 calls: int) -> tuple[str, float, float, int]:
    """(run id, seconds through the ledger, seconds of raw executemany, rows) for one run."""
    from agentctl.domain.agent import AgentKind, AgentSpec
    from agentctl.services.lifecycle.ledger import Ledger
    from agentctl.services.lifecycle.runs import create_run, lease_run

    run = create_run(store, settings, task_id, agent=AgentSpec(AgentKind.NOOP))
    lease = lease_run(store, worker_id="bench", ttl_seconds=3600, run_id=run.run_id)
    assert lease is not None
    ledger = Ledger(store, lease, spec_digest=run.spec_digest)
    cpu = time.process_time()
    ours = record_fs_writes(ledger, calls)
    CPU.append(time.process_time() - cpu)

    database = store.home.sqlite_path
    assert database is not None
    source = sqlite3.connect(database)
    target = sqlite3.connect(copy_path)
    target.execute("PRAGMA journal_mode=WAL")
    target.execute("PRAGMA synchronous=NORMAL")
    tables = {"step": "run_id", "tool_call": "run_id", "event": "run_id"}
    batches = {}
    for table, column in tables.items():
        schema = source.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        target.execute(schema[0])
        for (index_sql,) in source.execute(
                "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type = 'index' AND sql "
                "IS NOT NULL", (table,)):
            target.execute(index_sql)
        rows = source.execute(f"SELECT * FROM {table} WHERE {column} = ?", (run.run_id,)).fetchall()
        batches[table] = rows
    started, cpu = time.perf_counter(), time.process_time()
    with target:
        for table, rows in batches.items():
            marks = ", ".join("?" for _ in rows[0])
            target.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    raw = time.perf_counter() - started
    CPU.append(time.process_time() - cpu)
    source.close()
    target.close()
    return run.run_id, ours, raw, sum(len(rows) for rows in batches.values())


def bench_tree(home: str, run_id: str) -> None:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([AGENTCTL, "--home", home, "run", "show", "--tree", run_id], check=True,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    line("run show --tree (many-step run)", statistics.median(times), None, "s ", "<= 0.4 s")


CAPTURE = """
import sys, time
from pathlib import Path
from agentctl.domain.spec import PlannedCheck
from agentctl.execution.verification.verifier import run_check
from agentctl.store.blobs import BlobStore
root = Path(sys.argv[1]); command = sys.argv[2]
check = PlannedCheck(name="big", command=command, timeout_seconds=600)
started = time.perf_counter()
outcome = run_check(check, workspace=root, env={"PATH": "/usr/bin:/bin"}, log_path=root / "big.log",
                    infra_patterns=())
blob = BlobStore(root / "artifacts").put_file(root / "big.log", move=True)
elapsed = time.perf_counter() - started
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the (large) parent across exec.
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status")
               if line.startswith("VmHWM:"))
print(elapsed, blob.size_bytes, peak_kb)
"""


def bench_log(root: Path, megabytes: int) -> None:
    producer = f"head -c {megabytes * 1024 * 1024} /dev/zero | tr '\\0' 'x' | fold -w 100"
    work = root / "capture"
    work.mkdir()
    started = time.perf_counter()
    subprocess.run(["sh", "-c", f"{producer} > {work / 'baseline.log'}"], check=True)
    baseline = time.perf_counter() - started
    (work / "baseline.log").unlink()
    output = subprocess.run([sys.executable, "-c", CAPTURE, str(work), producer], check=True,
                            capture_output=True, text=True).stdout.split()
    elapsed, size, peak_kb = float(output[0]), int(output[1]), int(output[2])
    line(f"verifier log {size / 1e6:.0f} MB captured+hashed+stored", elapsed, baseline, "s ",
         "<= 4x")
    print(f"{'  peak memory of the capturing process':<44} {peak_kb / 1024:8.1f} MB  "
          f"{'':<30} target < 100 MB")


def bench_noop(root: Path) -> None:
    repo = root / "noop-repo"
    shutil.copytree(root / "repo", repo)
    home = root / "noop-home"
    env = {**ENV, "AGENTCTL_HOME": str(home)}
    submitted = subprocess.run([AGENTCTL, "task", "submit", "--repo", str(repo), "--type",
                                "custom", "--instruction", "noop", "--verify", "true", "--json"],
                               check=True, capture_output=True, text=True, env=env)
    task_id = json.loads(submitted.stdout)["taskId"]
    samples = []
    for _ in range(3):
        started = time.perf_counter()
        finished = subprocess.run([AGENTCTL, "run", "start", task_id, "--agent", "noop",
                                   "--json"], capture_output=True, text=True, env=env)
        total = time.perf_counter() - started
        run_id = json.loads(finished.stdout)["runId"]
        tree = json.loads(subprocess.run([AGENTCTL, "run", "show", "--tree", "--json", run_id],
                                         check=True, capture_output=True, text=True,
                                         env=env).stdout)
        clone = sum(_seconds(step) for attempt in tree["attempts"] for step in attempt["steps"]
                    if step["type"] == "CLONE_REPOSITORY")
        samples.append((total - clone, total, clone))
    besides, total, clone = sorted(samples)[1]
    line("noop run besides the clone (whole command)", besides, None, "s ", "< 0.8 s")
    print(f"{'  (total, of which clone)':<44} {total:8.3f} s   clone {clone:.3f} s")


def _seconds(step: dict) -> float:  # type: ignore[type-arg]
    from datetime import datetime

    return (datetime.fromisoformat(step["endedAt"]) -
            datetime.fromisoformat(step["startedAt"])).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="recordings; the median counts")
    parser.add_argument("--log-mb", type=int, default=500)
    parser.add_argument("--skip-log", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="agentctl-bench-"))
    try:
        run_id, home = bench_records(root, args.calls, args.repeat)
        bench_tree(home, run_id)
        if not args.skip_log:
            bench_log(root, args.log_mb)
        bench_noop(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
