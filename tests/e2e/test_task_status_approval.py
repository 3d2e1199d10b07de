"""A task whose run waits for a person's approval reads as that run does (NEEDS_APPROVAL) in
`task show` and `task list`, names the run and the command that approves it, and reads
COMPLETED once the approval is recorded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench

PLAN = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
        "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}


def test_a_task_reads_needs_approval_while_its_run_awaits_a_person(
        tmp_path: Path, repo_maker: Any, run_agentctl: Any) -> None:
    repo = repo_maker(tmp_path / "calc", CALC_FILES)
    bench = Bench(tmp_path, run_agentctl)
    task = bench.submit(repo, "--verify", UNITTEST, "--autonomy", "supervised_pr")
    run = bench.start(task, f"script:{bench.plan('plan.toml', PLAN)}")
    assert run["status"] == "NEEDS_APPROVAL", run

    shown = bench.cli("task", "show", task).stdout
    assert re.search(rf"^status +NEEDS_APPROVAL  run #1 awaits approval: agentctl verdict "
                     rf"approve {run['runId']}$", shown, re.MULTILINE), shown
    assert "COMPLETED" not in shown.split("\n  run #")[0], shown
    assert bench.json("task", "show", task)["awaitingApproval"] == run["runId"]
    listed = bench.cli("task", "list", "--full").stdout
    assert re.search(rf"^{task}\s+NEEDS_APPROVAL\s", listed, re.MULTILINE), listed

    bench.cli("verdict", "approve", run["runId"], "--by", "alice", "--reason", "read it")
    shown = bench.cli("task", "show", task).stdout
    assert re.search(r"^status +COMPLETED", shown, re.MULTILINE), shown
    assert "awaits approval" not in shown
    assert bench.json("task", "show", task)["awaitingApproval"] is None
    assert re.search(rf"^{task}\s+COMPLETED\s", bench.cli("task", "list", "--full").stdout,
                     re.MULTILINE)
