"""`verdict approve` as a reviewer types it: with no run id it takes the newest run awaiting
approval of the repository they stand in (and says which); with no --reason it asks for one
on a terminal, and without a terminal it is one line and exit 2, nothing recorded."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENTCTL, GIT_IDENTITY
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench
from tests.e2e.terminal_support import terminal

PLAN = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
        "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}


@pytest.fixture
def waiting(tmp_path: Path, repo_maker: Any, run_agentctl: Any) -> tuple[Bench, Path, str]:
    """A bench, the repository of its run, and the run, awaiting approval."""
    repo = repo_maker(tmp_path / "calc", CALC_FILES)
    bench = Bench(tmp_path, run_agentctl)
    task = bench.submit(repo, "--verify", UNITTEST, "--autonomy", "supervised_pr")
    run = bench.start(task, f"script:{bench.plan('plan.toml', PLAN)}")
    assert run["status"] == "NEEDS_APPROVAL", run
    return bench, repo, run["runId"]


def approvals(bench: Bench, run_id: str) -> list[Any]:
    return [e for e in bench.json("events", "--run", run_id) if e["type"] == "ApprovalRecorded"]


def test_approve_at_a_terminal_takes_the_newest_waiting_run_here_and_asks_why(
        waiting: tuple[Bench, Path, str]) -> None:
    bench, repo, run_id = waiting
    env = {"AGENTCTL_HOME": str(bench.home), **GIT_IDENTITY}
    with terminal(80, repo, env) as term:
        term.type(f"{AGENTCTL} verdict approve; echo \"ex\"it=$?")
        asked = term.wait_for(f"Why approve run {run_id}?", across_lines=True)
        term.type("")  # an empty answer is asked again
        term.wait_for("a reason is needed")
        term.type("read the diff")
        screen = term.wait_for("exit=")
    assert f"run {run_id} (#1), the newest of {repo} awaiting approval" in asked.replace(
        "\n", ""), asked
    assert "exit=0" in screen and re.search(rf"^APPROVED {run_id} by ", screen, re.MULTILINE)
    [recorded] = approvals(bench, run_id)
    assert (recorded["payload"]["decision"], recorded["payload"]["reason"]) == (
        "APPROVED", "read the diff")


def test_approve_without_a_terminal_needs_a_reason_and_records_nothing(
        waiting: tuple[Bench, Path, str]) -> None:
    bench, repo, run_id = waiting
    done = subprocess.run([AGENTCTL, "--home", str(bench.home), "verdict", "approve"],
                          cwd=repo, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done
    assert done.stderr.splitlines()[-1] == ("agentctl: error: approve needs --reason TEXT "
                                            "(no terminal to ask on)"), done.stderr
    assert "Traceback" not in done.stderr
    assert approvals(bench, run_id) == []
    assert json.loads(subprocess.run(
        [AGENTCTL, "--home", str(bench.home), "run", "show", run_id, "--json"],
        capture_output=True, text=True, check=True).stdout)["status"] == "NEEDS_APPROVAL"


def test_approve_with_no_run_outside_its_repository_names_none_waiting(
        waiting: tuple[Bench, Path, str], repo_maker: Any, tmp_path: Path) -> None:
    bench, _, run_id = waiting
    other = repo_maker(tmp_path / "other", {"README.md": "x\n"})
    done = subprocess.run([AGENTCTL, "--home", str(bench.home), "verdict", "approve",
                           "--reason", "x"], cwd=other, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr == (f"agentctl: error: no run of {other} awaits approval; name one "
                           "(agentctl run list)\n")
    assert approvals(bench, run_id) == []
