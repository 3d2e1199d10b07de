"""in-toto's test-result predicate for one check: PASSED, WARNED or FAILED, and each test by name,
from the runner's per-test report whether or not the base was compared."""

from __future__ import annotations

from dataclasses import replace

from agentctl.domain.attestation import test_result as predicate_of
from agentctl.domain.enums import TestClassification, TestOutcome, VerificationCheckStatus
from agentctl.domain.verification import (
    ClassifiedTest,
    TestReport,
    TestResult,
    VerificationCheck,
)

CHECK = VerificationCheck(name="pytest", command="python -m pytest -q",
                          status=VerificationCheckStatus.PASSED, exit_code=0,
                          duration_seconds=1.0, log_artifact=None, summarized_failure=None,
                          required=True)
REPORT = TestReport(runner="pytest", results=(
    TestResult(test_id="t::a", outcome=TestOutcome.PASSED),
    TestResult(test_id="t::b", outcome=TestOutcome.PASSED),
    TestResult(test_id="t::s", outcome=TestOutcome.SKIPPED)))


def test_a_check_without_a_base_comparison_names_its_passing_tests() -> None:
    predicate = predicate_of(CHECK, REPORT)
    assert predicate["result"] == "PASSED"
    assert predicate["passedTests"] == ["t::a", "t::b"]
    assert predicate["warnedTests"] == predicate["failedTests"] == []


def test_a_failed_check_is_failed_with_its_failing_tests() -> None:
    report = replace(REPORT, results=(*REPORT.results,
                                      TestResult(test_id="t::c", outcome=TestOutcome.ERROR)))
    failed = replace(CHECK, status=VerificationCheckStatus.FAILED, exit_code=1,
                     failing_test_ids=("t::c",))
    predicate = predicate_of(failed, report)
    assert predicate["result"] == "FAILED"
    assert predicate["failedTests"] == ["t::c"]
    assert predicate["passedTests"] == ["t::a", "t::b"]


def test_a_flaky_test_makes_a_passing_check_warned() -> None:
    flaky = ClassifiedTest(test_id="t::b", classification=TestClassification.FLAKY,
                           candidate=TestOutcome.PASSED, base=TestOutcome.PASSED)
    predicate = predicate_of(replace(CHECK, classified_tests=(flaky,)), REPORT)
    assert predicate["result"] == "WARNED"
    assert predicate["warnedTests"] == ["t::b"]
    assert predicate["passedTests"] == ["t::a"]


def test_without_a_report_the_base_comparison_names_the_tests() -> None:
    fixed = ClassifiedTest(test_id="t::f", classification=TestClassification.FAIL_TO_PASS,
                           candidate=TestOutcome.PASSED, base=TestOutcome.FAILED)
    assert predicate_of(replace(CHECK, classified_tests=(fixed,)), None)["passedTests"] == [
        "t::f"]
