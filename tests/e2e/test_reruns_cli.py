"""A unittest bug fix through the installed `agentctl` on a base that already fails hundreds
of tests: the reruns name them through a file, so no record limit turns the verdict into an
infrastructure failure, and the step records stay small."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Result, git, make_repo

ALREADY_FAILING = 300


def many_failing_tests() -> str:
    names = "".join(f"    def test_already_broken_on_the_base_{n:03}(self):\n"
                    "        self.assertEqual(1, 2)\n\n" for n in range(ALREADY_FAILING))
    return f"import unittest\n\n\nclass AlreadyBroken(unittest.TestCase):\n{names}"


def test_a_unittest_fix_on_a_base_with_300_failures_is_judged_and_its_steps_stay_small(
        tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    repo = make_repo(tmp_path / "repo", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "import unittest\n\nfrom calc import add\n\n\n"
                        "class AddTest(unittest.TestCase):\n"
                        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
        "test_many.py": many_failing_tests()})
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "fix.diff").write_text(git(repo, "diff") + "\n")
    git(repo, "checkout", "-q", "--", "calc.py")
    home = tmp_path / "home"
    command = f"{sys.executable} -m unittest"
    ran = run_agentctl("task", "submit", "--repo", str(repo), "--base", "main", "--type",
                       "bug_fix", "--instruction", "fix add", "--verify", command,
                       "--must-pass", "test_calc.AddTest.test_add", "--run",
                       "--agent", "patch:fix.diff", "--json", home=home, cwd=cwd, timeout=600)
    run: Any = json.loads(ran.stdout)

    assert run["status"] != "FAILED_INFRASTRUCTURE", ran.stderr
    assert run["verdict"]["status"] == "SUCCESS_NEEDS_REVIEW", run["verdict"]
    shown: Any = run_agentctl("run", "show", run["runId"], "--tree", "--json", home=home,
                              cwd=cwd).json()
    steps = [s for a in shown["attempts"] for s in a["steps"] if s["type"] == "RUN_VERIFIER"]
    (rerun,) = [s for s in steps if s["title"].startswith("rerun:")]
    assert rerun["attributes"]["command"] == command
    assert rerun["attributes"]["selectedCount"] == ALREADY_FAILING
    assert len(rerun["attributes"]["selected"]) == 5
    assert rerun["attributes"]["reranInProcessCount"] == ALREADY_FAILING
    assert len(rerun["attributes"]["reranInProcess"]) == 5
    assert not [s for s in steps if s["title"].startswith("baseline rerun:")]
    assert max(len(json.dumps(s["attributes"])) for s in steps) < 2_000
