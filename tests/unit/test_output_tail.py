"""Why a step failed, from its output: the exception line first, then the last lines; and the
judge's "ran 0 tests" only about a check that succeeded."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from agentctl.domain.enums import VerificationCheckStatus, VerificationStatus
from agentctl.domain.judge import judge_by_rules
from agentctl.domain.output_tail import LINE_WIDTH, exception_line, output_tail
from agentctl.domain.patch import PatchBoundaryCheck
from agentctl.domain.spec import JudgePolicy
from agentctl.domain.step import CANCELLED
from agentctl.domain.verification import VerificationCheck, VerificationReport
from agentctl.services.queries.failure_output import StepOutput, failure_tails
from tests.unit.conftest import T0

PYTEST_COLLECTION = """\
==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_stats.py _____________________
ImportError while importing test module '/w/tests/test_stats.py'.
Traceback:
tests/test_stats.py:1: in <module>
    from stats import mean
E   ModuleNotFoundError: No module named 'stats'
=========================== short test summary info ============================
ERROR tests/test_stats.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.05s
"""

PYTEST_FAILURE = """\
    def test_len():
>       assert len(IniConfig("x", data="")) == 0
E       TypeError: object of type 'IniConfig' has no len()

testing/test_iniconfig.py:12: TypeError
=========================== short test summary info ============================
FAILED testing/test_iniconfig.py::test_len - TypeError: object of type 'IniConfig' has no len()
1 failed, 53 passed in 0.31s
"""


@pytest.mark.parametrize(("output", "expected"), [
    (PYTEST_COLLECTION, "ModuleNotFoundError: No module named 'stats'"),
    (PYTEST_FAILURE, "TypeError: object of type 'IniConfig' has no len()"),
    ("Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyboardInterrupt\n",
     "KeyboardInterrupt"),
    ("java.lang.AssertionError: expected:<1> but was:<2>\n", "java.lang.AssertionError: "
     "expected:<1> but was:<2>"),
    ("\x1b[31mE   ValueError: bad\x1b[0m\n", "ValueError: bad"),
])
def test_the_exception_line_is_found_as_its_runner_printed_it(output: str, expected: str) -> None:
    assert exception_line(output) == expected
    assert output_tail(output)[0] == expected


def test_the_tail_leads_with_the_exception_then_the_last_lines_without_section_rules() -> None:
    assert output_tail(PYTEST_FAILURE) == (
        "TypeError: object of type 'IniConfig' has no len()",
        '>       assert len(IniConfig("x", data="")) == 0',
        "testing/test_iniconfig.py:12: TypeError",
        "FAILED testing/test_iniconfig.py::test_len - TypeError: object of type 'IniConfig' has "
        "no len()",
        "1 failed, 53 passed in 0.31s")


def test_output_without_an_exception_is_its_last_lines_and_long_lines_are_cut() -> None:
    assert output_tail("one\n\ntwo\nthree\n", lines=2) == ("two", "three")
    (line,) = output_tail("x" * 1000)
    assert len(line) == LINE_WIDTH and line.endswith("…")
    assert output_tail("") == ()
    assert exception_line("no errors here, all fine\n") is None


def _judged(check: VerificationCheck) -> list[str]:
    report = VerificationReport(
        verification_report_id="verification_1", run_id="run_1", attempt_id="attempt_1",
        status=VerificationStatus.PASSED, checks=(check,), full_report_artifact=None,
        started_at=T0, ended_at=T0)
    judgement = judge_by_rules(
        instruction="fix", changes=(), diff_lines=(),
        boundary=PatchBoundaryCheck(passed=True, allowed_path_violations=(),
                                    forbidden_path_violations=(),
                                    unexpected_generated_files=(),
                                    unexpected_lockfile_changes=()),
        policy=JudgePolicy(strict=False, min_confidence=0.5, command=None, timeout_seconds=1,
                           max_diff_lines=1000, production_config_patterns=()),
        verification=report)
    return [f.message for f in judgement.findings]


def test_ran_zero_tests_is_said_only_of_a_check_that_exited_zero() -> None:
    passed = VerificationCheck(name="pytest", command="pytest -q",
                               status=VerificationCheckStatus.PASSED, exit_code=0,
                               duration_seconds=1, log_artifact=None, summarized_failure=None,
                               required=True, tests_ran=0)
    assert "`pytest -q` ran 0 tests: its success proves nothing" in _judged(passed)
    failed = replace(passed, status=VerificationCheckStatus.FAILED, exit_code=2,
                     summarized_failure="failed (exit 2): tests/test_stats.py")
    assert not any("proves nothing" in message for message in _judged(failed))


def test_paths_in_the_attempts_workspace_are_shown_relative_to_their_checkout() -> None:
    output = ('  File "/tmp/agentctl-ws-x1/verify/tests/test_a.py", line 8, in test_a\n'
              "ValueError: bad /tmp/agentctl-ws-x1/repo/a.py\n")
    assert output_tail(output, workspace="/tmp/agentctl-ws-x1") == (
        "ValueError: bad a.py", '  File "tests/test_a.py", line 8, in test_a')


def test_a_step_a_person_stopped_has_no_output_tail_and_a_failed_one_has() -> None:
    result = json.dumps({"output": "collecting\nValueError: bad value\n"})
    tails = failure_tails([StepOutput("stopped", "FAILED", result, (), failure_code=CANCELLED),
                           StepOutput("broken", "FAILED", result, (), failure_code="exit_1")],
                          None)
    assert list(tails) == ["broken"]
    assert tails["broken"][0] == "ValueError: bad value"
