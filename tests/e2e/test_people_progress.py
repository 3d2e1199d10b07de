"""Progress a person can read (a tmux pane): the live line counts the elapsed time, each phase
and check that ends leaves a line with its result and duration, and Ctrl-C says which run was
cancelled before exiting 130."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GIT_IDENTITY
from tests.e2e.runs_support import CALC_FILES, Bench
from tests.e2e.terminal_support import terminal

DOCSTRING = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
             "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}
SLOW_CHECK = "python3 -c 'import time; time.sleep({seconds})'"


@pytest.fixture
def bench(tmp_path: Path, run_agentctl: Callable[..., Any],
          repo_maker: Callable[..., Path]) -> dict[str, Any]:
    bench = Bench(tmp_path, run_agentctl)
    repo = repo_maker(tmp_path / "calc", CALC_FILES)
    plan = bench.plan("plan.toml", DOCSTRING)
    env = {"AGENTCTL_HOME": str(bench.home), **GIT_IDENTITY}
    return {"bench": bench, "repo": repo, "plan": plan, "env": env}


def test_a_long_check_shows_elapsed_time_and_leaves_its_result_line(bench: dict[str, Any],
                                                                   ) -> None:
    task = bench["bench"].submit(bench["repo"], "--verify", SLOW_CHECK.format(seconds=4))
    with terminal(120, bench["bench"].cwd, bench["env"]) as term:
        term.type(f"agentctl run start {task} --agent script:{bench['plan']}; echo \"ex\"it=$?")
        live = term.wait_for("verifying: python3 -c")
        for _ in range(100):  # the live line's clock moves while the check sleeps
            seconds = re.findall(r"verifying: python3 -c .*?(\d+\.\d)s", term.screen())
            if seconds and float(seconds[-1]) >= 2.0:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(live)
        screen = term.wait_for("exit=", timeout=120)
    kept = [line for line in screen.splitlines() if line.startswith(("✓", "✗"))]
    assert any(line.startswith("✓ workspace") for line in kept), screen
    check = next(line for line in kept if "python3" in line)
    assert check.startswith("✓ ") and re.search(r"\b[4-9]\.\ds$", check), check
    assert any(line.startswith("✓ judge") for line in kept), screen


def test_ctrl_c_prints_which_run_was_cancelled_and_exits_130(bench: dict[str, Any]) -> None:
    task = bench["bench"].submit(bench["repo"], "--verify", SLOW_CHECK.format(seconds=120))
    with terminal(80, bench["bench"].cwd, bench["env"]) as term:
        term.type(f"agentctl run start {task} --agent script:{bench['plan']}; echo \"ex\"it=$?")
        term.wait_for("verifying: python3")
        term.keys("C-c")
        screen = term.wait_for("exit=", timeout=60)
    run = bench["bench"].json("run", "list", "--task", task)[0]
    assert run["status"] == "CANCELLED"
    assert f"agentctl: run {run['runId']} cancelled" in screen, screen
    assert "exit=130" in screen
