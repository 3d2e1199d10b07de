"""run_check on real commands in a throw-away workspace: status, summary, failing tests."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from agentctl.domain.enums import VerificationCheckStatus as C
from agentctl.domain.spec import PlannedCheck
from agentctl.execution.environment import scrubbed_env
from agentctl.execution.verification.verifier import CheckOutcome, run_check
from tests.support.processes import group_is_gone

ENV = scrubbed_env(("PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR"))
PYTHON = shlex.quote(sys.executable)

PYTEST_OUTPUT = """\
F.                                                                       [100%]
=================================== FAILURES ===================================
__________________________________ test_greet __________________________________
    def test_greet():
>       assert greet('x') == 'hello x'
E       AssertionError: assert 'hi x' == 'hello x'
tests/test_app.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_app.py::test_greet - AssertionError: assert 'hi x' == 'hello x'
1 failed, 1 passed in 0.03s
"""

FAILING_UNITTEST = """\
import unittest


class GreetingTest(unittest.TestCase):
    def test_greet(self):
        self.assertEqual("hi x", "hello x")

    def test_passes(self):
        self.assertTrue(True)
"""

JUNIT = """\
<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3" failures="1" errors="1">
<testcase classname="tests.test_app" name="test_greet">
  <failure message="AssertionError: assert 'hi x' == 'hello x'&#10;more detail">trace</failure>
</testcase>
<testcase classname="tests.test_app" name="test_setup">
  <error message="fixture 'db' not found"/>
</testcase>
<testcase classname="tests.test_app" name="test_ok"/>
</testsuite></testsuites>
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def check(workspace: Path, command: str, *, infra_patterns: tuple[str, ...] = (),
          **options: object) -> CheckOutcome:
    planned = PlannedCheck(name="test", command=command, **options)  # type: ignore[arg-type]
    return run_check(planned, workspace=workspace, env=ENV, infra_patterns=infra_patterns,
                     log_path=workspace.parent / "logs" / "check.log")


def test_a_passing_check_has_no_failure_summary(workspace: Path) -> None:
    outcome = check(workspace, "echo all good")
    assert outcome.status is C.PASSED
    assert (outcome.exit_code, outcome.summarized_failure, outcome.failing_tests) == (0, None, ())
    assert outcome.output_bytes == len("all good\n")
    assert (workspace.parent / "logs" / "check.log").read_text() == "all good\n"


def test_failing_pytest_output_names_the_failing_test(workspace: Path) -> None:
    (workspace / "pytest.out").write_text(PYTEST_OUTPUT)
    outcome = check(workspace, "cat pytest.out; exit 1")
    assert outcome.status is C.FAILED
    assert outcome.failing_tests == (
        "tests/test_app.py::test_greet - AssertionError: assert 'hi x' == 'hello x'",)
    assert outcome.summarized_failure == (
        "`cat pytest.out; exit 1` failed (exit 1): "
        "tests/test_app.py::test_greet - AssertionError: assert 'hi x' == 'hello x'")


def test_a_failing_unittest_run_names_the_test_and_its_assertion(workspace: Path) -> None:
    (workspace / "test_greeting.py").write_text(FAILING_UNITTEST)
    outcome = check(workspace, f"{PYTHON} -m unittest test_greeting")
    assert outcome.status is C.FAILED and outcome.exit_code == 1
    assert outcome.failing_tests == (
        "test_greeting.GreetingTest.test_greet - AssertionError: 'hi x' != 'hello x'",)
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        "failed (exit 1): test_greeting.GreetingTest.test_greet - AssertionError: "
        "'hi x' != 'hello x'")


def test_junit_report_written_by_the_command_names_the_failing_tests(workspace: Path) -> None:
    (workspace / "junit-source.xml").write_text(JUNIT)
    outcome = check(workspace, "mkdir -p build && cp junit-source.xml build/junit.xml; exit 1",
                    junit_xml="build/junit.xml")
    assert outcome.status is C.FAILED
    assert outcome.junit_report == workspace / "build" / "junit.xml"
    assert outcome.junit_report.is_absolute()
    assert outcome.failing_tests == (
        "tests.test_app.test_greet - AssertionError: assert 'hi x' == 'hello x'",
        "tests.test_app.test_setup - fixture 'db' not found",
    )
    assert outcome.summarized_failure == (
        "`mkdir -p build && cp junit-source.xml build/junit.xml; exit 1` failed (exit 1): "
        "tests.test_app.test_greet - AssertionError: assert 'hi x' == 'hello x' (+1 more)")


def test_a_real_pytest_junit_report_is_found_and_parsed(workspace: Path) -> None:
    (workspace / "test_real.py").write_text(
        "def test_fails():\n    assert 1 + 1 == 3\n\ndef test_passes():\n    pass\n")
    outcome = check(workspace, f"{PYTHON} -m pytest -q -p no:cacheprovider "
                               "--junitxml=reports/junit.xml test_real.py",
                    junit_xml="reports/junit.xml")
    assert outcome.status is C.FAILED
    assert outcome.junit_report == workspace / "reports" / "junit.xml"
    assert len(outcome.failing_tests) == 1
    assert outcome.failing_tests[0].startswith("test_real.test_fails - assert")


def test_a_junit_report_that_was_already_there_is_not_evidence(workspace: Path) -> None:
    (workspace / "junit.xml").write_text(JUNIT)
    outcome = check(workspace, "echo 'FAILED tests/test_x.py::test_y - boom'; exit 1",
                    junit_xml="junit.xml")
    assert outcome.junit_report is None
    assert outcome.failing_tests == ("tests/test_x.py::test_y - boom",)


def test_a_malformed_junit_report_falls_back_to_the_log(workspace: Path) -> None:
    outcome = check(workspace, "echo '<testsuite' > junit.xml; echo 'Error: it broke'; exit 2",
                    junit_xml="junit.xml")
    assert outcome.status is C.FAILED and outcome.junit_report is None
    assert outcome.summarized_failure and outcome.summarized_failure.endswith(
        "failed (exit 2): Error: it broke")


def test_exit_127_is_an_infrastructure_failure(workspace: Path) -> None:
    outcome = check(workspace, "exit 127")
    assert outcome.status is C.INFRA_FAILURE
    assert outcome.summarized_failure == (
        "`exit 127` infrastructure failure: command not found or not executable (exit 127)")


def test_a_missing_tool_is_an_infrastructure_failure_citing_the_shell(workspace: Path) -> None:
    outcome = check(workspace, "mvn-not-installed -q test")
    assert outcome.status is C.INFRA_FAILURE and outcome.exit_code == 127
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.startswith(
        "`mvn-not-installed -q test` infrastructure failure: command not found or not executable "
        "(exit 127): ")
    assert "mvn-not-installed" in outcome.summarized_failure.split("(exit 127): ")[1]


def test_a_dns_failure_in_the_log_is_an_infrastructure_failure_citing_it(workspace: Path) -> None:
    outcome = check(workspace, "echo 'Cloning...'; "
                               "echo \"fatal: unable to access 'https://github.com/o/r.git/': "
                               "Could not resolve host: github.com\"; echo done; exit 1")
    assert outcome.status is C.INFRA_FAILURE
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        "infrastructure failure: fatal: unable to access 'https://github.com/o/r.git/': "
        "Could not resolve host: github.com")


def test_infra_patterns_from_the_plan_are_used_too(workspace: Path) -> None:
    outcome = check(workspace, "echo 'runner quota exceeded'; exit 1",
                    infra_patterns=("quota exceeded",))
    assert outcome.status is C.INFRA_FAILURE
    assert outcome.summarized_failure == (
        "`echo 'runner quota exceeded'; exit 1` infrastructure failure: runner quota exceeded")




def test_a_timeout_is_timed_out_and_leaves_nothing_running(workspace: Path) -> None:
    outcome = check(workspace, "echo $$; sleep 30 & sleep 30", timeout_seconds=0.5)
    assert outcome.status is C.TIMED_OUT
    assert outcome.summarized_failure == "`echo $$; sleep 30 & sleep 30` timed out after 0.5s"
    pgid = int((workspace.parent / "logs" / "check.log").read_text().split()[0])
    assert group_is_gone(pgid)


def test_a_cancelled_check_says_it_was_cancelled(workspace: Path) -> None:
    planned = PlannedCheck(name="slow", command="sleep 30")
    stop_at = time.monotonic() + 0.2
    outcome = run_check(planned, workspace=workspace, env=ENV, infra_patterns=(),
                        log_path=workspace.parent / "cancel.log",
                        should_stop=lambda: time.monotonic() > stop_at)
    assert outcome.status is C.CANCELLED
    assert outcome.summarized_failure == "`sleep 30` was cancelled"
