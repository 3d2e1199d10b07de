"""`audit verify` and the signed checkpoint, beside baselines measured in the same run (issue 10).

    .venv/bin/python benchmarks/bench_audit.py [--calls 50000]

1. `agentctl audit verify` over a home of ~100,000 events (a run of CALLS tool calls, two events
   each), as a fresh process: re-hash the chain, digest every record, re-hash every blob, check
   the signed checkpoint. Target <= 2 s. Baseline: re-hashing the chain alone, in-process (what
   verify did before records and checkpoints were bound in).
2. The signing cost: recording 5,000 tool calls with the checkpoint signed after every commit,
   vs the same with no key (nothing signed). Target: the ratio close to 1 (amortised: one small
   file per commit, not per event).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from calls import record_fs_writes

AGENTCTL = str(Path(sys.executable).parent / "agentctl")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def line(name: str, value: float, baseline: float | None, unit: str, target: str) -> None:
    ratio = f"{value / baseline:5.2f}x" if baseline else "      "
    base = f"{baseline:8.3f} {unit}" if baseline is not None else " " * 10
    print(f"{name:<48} {value:8.3f} {unit}  baseline {base}  {ratio}  target {target}")


def record(root: Path, calls: int, *, signed: bool) -> tuple[Path, float]:
    """A home holding one run of `calls` recorded tool calls, and how long recording took."""
    from agentctl import config
    from agentctl.domain.agent import AgentKind, AgentSpec
    from agentctl.home import resolve_home
    from agentctl.services.actions.requests import TaskRequest
    from agentctl.services.actions.tasks import submit_task
    from agentctl.services.lifecycle.ledger import Ledger
    from agentctl.services.lifecycle.runs import create_run, lease_run
    from agentctl.store.storage import Store

    root.mkdir(parents=True)
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("bench\n")
    subprocess.run("git init -q -b main && git add -A && git commit -qm init", shell=True,
                   cwd=repo, check=True, env=ENV)
    home = resolve_home(str(root / "home"))
    store = Store(home)
    settings = config.defaults()
    task = submit_task(store, settings, TaskRequest(repository=str(repo), task_type="custom",
                                                    instruction="bench"), cwd=root)
    if not signed:
        store.signer.key_path.unlink()
        store.signer.checkpoint_path.unlink(missing_ok=True)
        store = Store(home)  # forgets the key it had read
    run = create_run(store, settings, task.task_id, agent=AgentSpec(AgentKind.NOOP))
    lease = lease_run(store, worker_id="bench", ttl_seconds=3600, run_id=run.run_id)
    assert lease is not None
    ledger = Ledger(store, lease, spec_digest=run.spec_digest)
    # a commit every 50 calls, as a busy agent's batches make
    return root / "home", record_fs_writes(ledger, calls, flush_every=50)


def chain_only(home: Path) -> tuple[float, int]:
    from agentctl.domain.events import find_chain_breaks
    from agentctl.home import resolve_home
    from agentctl.store.views import Views

    started = time.perf_counter()
    with Views(resolve_home(str(home))) as views:
        rows = list(views.event_chain())
        assert not find_chain_breaks(rows, views.event_head())
    return time.perf_counter() - started, len(rows)


def verify_seconds(home: Path) -> float:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        done = subprocess.run([AGENTCTL, "--home", str(home), "audit", "verify"],
                              capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        assert done.returncode == 0, done.stderr
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="agentctl-bench-audit-"))
    try:
        home, _ = record(root / "big", args.calls, signed=True)
        baseline, events = chain_only(home)
        line(f"audit verify, {events} events", verify_seconds(home), baseline, "s ",
             "<= 2 s")
        _, unsigned = record(root / "unsigned", 5_000, signed=False)
        _, signed = record(root / "signed", 5_000, signed=True)
        line("record 5000 tool calls, signed checkpoints", signed, unsigned, "s ", "~1x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
