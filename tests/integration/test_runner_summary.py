"""The runners' own summary lines, read from logs the real runners wrote, and the rule that a
check's exit code, report and log must agree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentctl.domain.ansi import strip_ansi
from agentctl.domain.runner_summary import (
    Evidence,
    ReportState,
    RunnerSummary,
    disagreement,
    read_summaries,
)
from tests.machine import unavailable
from tests.pipeline.test_baseline import JVM_QUICK, MAVEN_POM

CALC_TESTS = """
def test_add():
    assert 1 + 1 == 3

def test_one():
    pass

def test_two():
    pass

def test_three():
    pass
"""

UNITTEST_TESTS = """
import unittest

class T(unittest.TestCase):
    def test_fails(self):
        self.assertEqual(1, 2)

    def test_errs(self):
        raise RuntimeError("boom")

    def test_passes(self):
        pass

    @unittest.skip("later")
    def test_skipped(self):
        pass
"""

NODE_TESTS = """
const test = require('node:test');
const assert = require('node:assert');
test('adds', () => assert.strictEqual(1 + 1, 3));
test('passes', () => {});
test('passes too', () => {});
"""



def logged(command: list[str], cwd: Path) -> str:
    """What the runner printed, stdout and stderr together as a check's log has them."""
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=False, timeout=600)
    return strip_ansi(done.stdout)


def last(summaries: tuple[RunnerSummary, ...], runner: str) -> RunnerSummary:
    return [s for s in summaries if s.runner == runner][-1]


def test_a_real_pytest_log_says_one_failed_three_passed(tmp_path: Path) -> None:
    (tmp_path / "test_calc.py").write_text(CALC_TESTS)

    for flags in ([], ["-q"]):
        summary = last(read_summaries(logged([sys.executable, "-m", "pytest", "-p",
                                              "no:cacheprovider", *flags], tmp_path)), "pytest")

        assert (summary.failed, summary.passed, summary.errors) == (1, 3, 0)
        assert summary.line.startswith("1 failed, 3 passed in ")


def test_a_real_pytest_log_counts_errors_and_no_tests(tmp_path: Path) -> None:
    (tmp_path / "test_broken.py").write_text("import not_a_module_here\n")
    broken = last(read_summaries(logged([sys.executable, "-m", "pytest", "-p",
                                         "no:cacheprovider"], tmp_path)), "pytest")
    (tmp_path / "test_broken.py").unlink()
    empty = last(read_summaries(logged([sys.executable, "-m", "pytest", "-p",
                                        "no:cacheprovider"], tmp_path)), "pytest")

    assert broken.errors == 1 and broken.failing == 1
    assert empty.line.startswith("no tests ran") and empty.failing == 0


def test_a_real_unittest_log_says_failures_and_errors(tmp_path: Path) -> None:
    (tmp_path / "test_u.py").write_text(UNITTEST_TESTS)

    summary = last(read_summaries(logged([sys.executable, "-m", "unittest"], tmp_path)),
                   "unittest")

    assert (summary.failed, summary.errors, summary.skipped, summary.passed) == (1, 1, 1, 1)
    assert "FAILED (failures=1, errors=1, skipped=1)" in summary.line


def test_a_real_passing_unittest_log_says_ok(tmp_path: Path) -> None:
    (tmp_path / "test_u.py").write_text("import unittest\n\nclass T(unittest.TestCase):\n"
                                        "    def test_ok(self):\n        pass\n")

    summary = last(read_summaries(logged([sys.executable, "-m", "unittest"], tmp_path)),
                   "unittest")

    assert (summary.failing, summary.passed) == (0, 1)


def test_a_real_node_test_log_says_one_failed(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        unavailable("node is not installed")
    (tmp_path / "calc.test.js").write_text(NODE_TESTS)

    for reporter in ("tap", "spec"):
        summary = last(read_summaries(logged([node, "--test", f"--test-reporter={reporter}",
                                              "calc.test.js"], tmp_path)), "node")

        assert (summary.failed, summary.passed) == (1, 2)


def test_a_real_maven_surefire_log_says_tests_run_and_failures(tmp_path: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        unavailable("mvn is not installed")
    (tmp_path / "pom.xml").write_text(MAVEN_POM)
    (tmp_path / ".mvn").mkdir()
    (tmp_path / ".mvn/jvm.config").write_text(JVM_QUICK)
    main, test = tmp_path / "src/main/java/demo", tmp_path / "src/test/java/demo"
    main.mkdir(parents=True)
    test.mkdir(parents=True)
    (main / "Calc.java").write_text("package demo;\npublic class Calc {\n"
                                    "  public static int add(int a, int b) { return a - b; }\n}\n")
    (test / "CalcTest.java").write_text(
        "package demo;\nimport org.junit.jupiter.api.Test;\n"
        "import static org.junit.jupiter.api.Assertions.assertEquals;\n"
        "class CalcTest {\n  @Test void adds() { assertEquals(5, Calc.add(2, 3)); }\n"
        "  @Test void zero() { assertEquals(0, Calc.add(0, 0)); }\n}\n")

    log = logged([mvn, "-o", "-B", "test"], tmp_path)
    if "Could not resolve" in log or "offline" in log.lower() and "BUILD FAILURE" in log \
            and "Tests run" not in log:
        unavailable("mvn has no offline repository with JUnit 5 and surefire")
    summary = last(read_summaries(log), "surefire")

    assert (summary.failed, summary.errors, summary.passed) == (1, 0, 1)


@pytest.mark.parametrize(("line", "runner", "failing"), [
    ("Tests:       1 failed, 3 passed, 4 total", "jest", 1),
    ("Test Suites: 1 failed, 2 passed, 3 total", "jest", 1),
    ("      Tests  2 failed | 3 passed (5)", "vitest", 2),
    ("FAIL\texample.com/calc\t0.004s", "go", 1),
    ("--- FAIL: TestAdd (0.00s)", "go", 1),
    ("ok  \texample.com/calc\t0.004s", "go", 0),
])
def test_other_runners_summaries_are_read(line: str, runner: str, failing: int) -> None:
    summary = last(read_summaries(f"some output\n{line}\n"), runner)

    assert summary.failing == failing


def test_a_log_of_no_known_runner_has_no_summary() -> None:
    assert read_summaries("building...\nall done\nFAIL: not a go line\n") == ()


def test_exit_zero_beside_a_log_that_says_a_test_failed_disagrees() -> None:
    summaries = read_summaries("===== 1 failed, 3 passed in 0.12s =====\n")

    assert disagreement(Evidence(exit_code=0, summaries=summaries)) == (
        "the evidence disagrees: exit code 0, but the log says 1 failed, 3 passed in 0.12s")


def test_exit_zero_beside_a_report_with_a_failure_disagrees() -> None:
    assert disagreement(Evidence(exit_code=0, report_failing=1)) == (
        "the evidence disagrees: exit code 0, but the report says 1 failed")


def test_a_report_without_failures_beside_a_log_with_one_disagrees() -> None:
    summaries = read_summaries("Ran 4 tests in 0.001s\n\nFAILED (failures=1)\n")

    reason = disagreement(Evidence(exit_code=1, report_failing=0, summaries=summaries))

    assert reason == ("the evidence disagrees: the report says no test failed, but the log says "
                      "Ran 4 tests: FAILED (failures=1)")


def test_an_unexpected_pass_pytest_forgives_is_no_disagreement() -> None:
    summaries = read_summaries("1 passed, 1 xpassed in 0.01s\n")

    assert disagreement(Evidence(exit_code=0, report_failing=1, summaries=summaries)) is None


def test_witnesses_that_agree_are_no_disagreement() -> None:
    summaries = read_summaries("===== 4 passed in 0.12s =====\n")

    assert disagreement(Evidence(exit_code=0, report_failing=0, summaries=summaries)) is None
    assert disagreement(Evidence(exit_code=1, report_failing=1, summaries=read_summaries(
        "1 failed, 3 passed in 0.1s"))) is None


def test_a_changed_runner_and_an_unfinished_report_are_named() -> None:
    changed = ReportState(started=True, ended=True,
                          tampered=("_pytest.reports.TestReport.from_item_and_call",))
    unfinished = ReportState(started=True, ended=False)

    assert disagreement(Evidence(exit_code=0, plugin=changed)) == (
        "the test runner was changed during the run: "
        "_pytest.reports.TestReport.from_item_and_call")
    assert disagreement(Evidence(exit_code=0, plugin=unfinished)) == (
        "the test process ended before its report was complete")
