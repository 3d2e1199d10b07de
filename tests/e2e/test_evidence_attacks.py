"""A bug fix that fixes nothing, submitted through the installed `agentctl` with a `patch:`
agent, whose tests would pass only because the evidence was silenced: by a make recipe that
ignores pytest's error, or by code that forges pytest's reports. Neither is SUCCESS."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Result, git, make_repo

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_zero():\n    assert add(0, 0) == 0\n")
FORGE = ("import _pytest.reports\n\n_real = _pytest.reports.TestReport.from_item_and_call\n\n\n"
         "def _passing(item, call):\n    report = _real(item, call)\n"
         "    report.outcome, report.longrepr = 'passed', None\n    return report\n\n\n"
         "_pytest.reports.TestReport.from_item_and_call = staticmethod(_passing)\n\n\n")


def submitted(tmp_path: Path, run_agentctl: Callable[..., Result], files: dict[str, str],
              changed: dict[str, str], verify: str) -> Any:
    """A bug_fix run of the patch that turns `files` into `changed`, as `run show --json`."""
    repo = make_repo(tmp_path / "repo", files)
    for path, text in changed.items():
        (repo / path).write_text(text)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "change.diff").write_text(git(repo, "diff") + "\n")
    git(repo, "checkout", "-q", "--", ".")
    ran = run_agentctl("task", "submit", "--repo", str(repo), "--base", "main", "--type",
                       "bug_fix", "--instruction", "fix add", "--verify", verify, "--run",
                       "--agent", "patch:change.diff", "--json", home=tmp_path / "home",
                       cwd=cwd, timeout=300)
    assert ran.stdout, ran.stderr
    return ran.json()


def verification_detail(tmp_path: Path, run_agentctl: Callable[..., Result], run_id: str) -> str:
    """The verification link of `verdict explain`, its time cut off."""
    explained = run_agentctl("verdict", "explain", run_id, "--json", home=tmp_path / "home",
                             cwd=tmp_path / "cwd")
    assert explained.returncode == 0, explained.stderr
    (link,) = [c for c in explained.json()["chain"] if c["check"] == "verification"]
    detail: str = link["detail"]
    return detail.rsplit(" in ", 1)[0] + " in " if " passed in " in detail else detail


def test_a_make_recipe_that_ignores_failing_pytest_is_not_success(
        tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    makefile = f"test:\n\t-{sys.executable} -m pytest -q -p no:cacheprovider tests\n"
    run = submitted(tmp_path, run_agentctl,
                    {"calc.py": BUGGY, "tests/test_calc.py": TESTS, "Makefile": makefile},
                    {"calc.py": "# add two numbers\n" + BUGGY}, "PYTHONPATH=. make test")

    assert run["verdict"]["status"] != "SUCCESS", run
    assert verification_detail(tmp_path, run_agentctl, run["runId"]) == (
        "`PYTHONPATH=. make test` failed: the evidence disagrees: exit code 0, but the log says "
        "1 failed, 1 passed in ")


def test_code_that_forges_pytest_reports_is_failed_verification_and_a_judge_finding(
        tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    run = submitted(tmp_path, run_agentctl, {"calc.py": BUGGY, "test_calc.py": TESTS},
                    {"calc.py": FORGE + BUGGY}, f"{sys.executable} -m pytest -q")

    assert run["verdict"]["status"] == "FAILED_VERIFICATION", run
    assert verification_detail(tmp_path, run_agentctl, run["runId"]).endswith(
        "failed: the test runner was changed during the run: "
        "_pytest.reports.TestReport.from_item_and_call")
    shown = run_agentctl("artifact", "show", run["runId"], "judge-report.json",
                         home=tmp_path / "home", cwd=tmp_path / "cwd")
    assert shown.returncode == 0, shown.stderr
    findings = shown.json()["findings"]
    assert [(f["category"], f["filePath"], f["blocksAutoPr"]) for f in findings
            if f["category"] == "test-runner-tampering"][:1] == [
        ("test-runner-tampering", "calc.py", True)], findings
