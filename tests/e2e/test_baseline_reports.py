"""The baseline from the command line: a bug fix run on a coloured pytest project, its
classification in `verdict explain`, SWE-bench's report.json and JUnit XML from `run report`,
the cache on a second run, and the bad inputs of `run report`."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from junitparser import Failure, JUnitXml

from tests.e2e.conftest import one_error_line
from tests.e2e.runs_support import runs_in_process
from tests.pipeline.test_baseline import BREAK_MUL, FIX_ADD, pytest_repo
from tests.support.calc import toml_plan

PYTEST = f"{sys.executable} -m pytest -q"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, run_agentctl,
         run_cli) -> Iterator[dict[str, Any]]:
    """Two runs of one bug fix on one base: the first fixes add (the test the task names), the
    second also breaks mul; answer() fails on the base and stays wrong."""
    root = tmp_path_factory.mktemp("baseline-cli")
    repo = pytest_repo(root)
    home, cwd = root / "home", root / "cwd"
    cwd.mkdir()
    state = root / "state"  # outside the checkouts: the sandbox lets the checks write it
    state.mkdir()
    marker = state / "ran.txt"
    (cwd / ".agentctl.toml").write_text(f'[verification]\nreruns = 0\n'
                                        f'[sandbox]\nwritable = ["{state}"]\n')
    (cwd / "fix.toml").write_text(toml_plan(FIX_ADD))
    (cwd / "break.toml").write_text(toml_plan(FIX_ADD, BREAK_MUL))

    def cli(*args: str, expect: tuple[int, ...] = (0,)) -> Any:
        if runs_in_process(args):  # submit, explain, report: in-process, as a Bench runs them
            result = run_cli(*args, home=home, cwd=cwd)
        else:
            result = run_agentctl(*args, home=home, cwd=cwd, timeout=300)
        assert result.returncode in expect, result.stderr
        return result

    task = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction",
               "fix add", "--verify", f"echo ran >> {marker} && {PYTEST}",
               "--must-pass", "tests/test_calc.py::test_add", "--json").json()
    fixed = cli("run", "start", task["taskId"], "--agent", "script:fix.toml", "--json").json()
    after_first = len(marker.read_text().splitlines())
    broken = cli("run", "start", task["taskId"], "--agent", "script:break.toml", "--json",
                 expect=(1,)).json()
    # a run that ended without checking says why, up front
    for run, verdict in ((fixed, "SUCCESS_NEEDS_REVIEW"), (broken, "FAILED_VERIFICATION")):
        assert run["verdict"]["status"] == verdict, json.dumps(run, indent=1)
    yield {"cli": cli, "fixed": fixed, "broken": broken, "root": root, "cwd": cwd,
           "after_first": after_first, "after_second": len(marker.read_text().splitlines())}


def test_the_second_run_on_the_same_base_does_not_run_the_base_again(
        runs: dict[str, Any]) -> None:
    assert runs["after_first"] == 2  # the patch's check, then the base's
    assert runs["after_second"] == 3  # the patch's check only: the baseline came from the cache


def test_verdict_explain_shows_each_test_against_the_base(runs: dict[str, Any]) -> None:
    explained = runs["cli"]("verdict", "explain", runs["broken"]["runId"], "--json").json()
    (check,) = explained["classification"]
    assert check["classification"] == "PASS_TO_FAIL"
    assert check["baselineCached"] is True
    assert check["tests"] == {"passed": 1, "failed": 2, "skipped": 0, "errors": 0}
    assert {t["testId"]: t["classification"] for t in check["classifiedTests"]} == {
        "tests/test_calc.py::test_add": "FAIL_TO_PASS",
        "tests/test_calc.py::test_mul": "PASS_TO_FAIL",
        "tests/test_calc.py::test_answer": "FAIL_TO_FAIL"}
    baseline = next(link for link in explained["chain"] if link["check"] == "baseline")
    assert baseline["passed"] is False
    assert "1 PASS_TO_FAIL" in baseline["detail"]

    text = runs["cli"]("verdict", "explain", runs["broken"]["runId"]).stdout
    assert "classification" in text
    assert "PASS_TO_FAIL" in text and "tests/test_calc.py::test_mul" in text


def test_the_swebench_report_matches_the_classification(runs: dict[str, Any]) -> None:
    broken = runs["broken"]["runId"]
    document = json.loads(runs["cli"]("run", "report", broken, "--format", "swebench").stdout)
    assert document == {broken: {
        "patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
        "resolved": False,
        "tests_status": {
            "FAIL_TO_PASS": {"success": ["tests/test_calc.py::test_add"], "failure": []},
            "PASS_TO_PASS": {"success": [], "failure": []},
            "FAIL_TO_FAIL": {"success": [], "failure": ["tests/test_calc.py::test_answer"]},
            "PASS_TO_FAIL": {"success": [], "failure": ["tests/test_calc.py::test_mul"]}}}}

    fixed = runs["fixed"]["runId"]
    report = json.loads(runs["cli"]("run", "report", fixed).stdout)[fixed]
    assert report["resolved"] is True
    assert report["tests_status"]["PASS_TO_PASS"] == {
        "success": ["tests/test_calc.py::test_mul"], "failure": []}


def test_the_junit_report_lists_every_test_with_its_failure(runs: dict[str, Any]) -> None:
    target = runs["root"] / "out" / "report.xml"
    target.parent.mkdir()
    runs["cli"]("run", "report", runs["broken"]["runId"], "--format", "junit",
                "--output", str(target))

    xml = JUnitXml.fromfile(str(target))
    (suite,) = list(xml)
    failures = {case.name: case.result[0].message for case in suite
                if case.result and isinstance(case.result[0], Failure)}
    assert failures == {"test_mul": "assert 5 == 6", "test_answer": "assert 41 == 42"}
    assert {case.name for case in suite} == {"test_add", "test_mul", "test_answer"}


@pytest.mark.parametrize(("args", "expected"), [
    (("--format", "pdf"), "unknown report format 'pdf'; expected one of: swebench, junit, html, "
                          "ctrf, atif"),
    (("--output", "/nonexistent-dir/report.json"), "cannot write /nonexistent-dir/report.json"),
])
def test_run_report_refuses_bad_input_in_one_line(runs: dict[str, Any], args: tuple[str, ...],
                                                  expected: str) -> None:
    result = runs["cli"]("run", "report", runs["fixed"]["runId"], *args, expect=(2,))
    one_error_line(result.stderr)
    assert expected in result.stderr


def test_run_report_names_a_test_report_that_fails_its_hash(runs: dict[str, Any]) -> None:
    broken = runs["broken"]["runId"]
    artifacts = runs["cli"]("artifact", "list", broken, "--json").json()
    (report,) = [a for a in artifacts if a["name"].endswith(".tests.json")]
    (blob,) = (runs["root"] / "home").rglob(report["sha256"])
    kept = blob.read_bytes()
    blob.chmod(0o644)
    blob.write_bytes(kept.replace(b"assert 5 == 6", b"assert 6 == 6"))
    try:
        result = runs["cli"]("run", "report", broken, "--format", "junit", expect=(3,))
    finally:
        blob.write_bytes(kept)
    line = one_error_line(result.stderr)
    assert f"artifact {report['artifactId']}" in line and "fails its hash" in line
    assert result.stdout == ""
