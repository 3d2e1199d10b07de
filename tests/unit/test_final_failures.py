"""A failure to load tests is final: never rerun, classified from its one run."""

from __future__ import annotations

from agentctl.domain.baseline import Observed
from agentctl.domain.enums import TestOutcome, VerificationCheckStatus
from agentctl.domain.final_failures import COLLECTION_ERROR, is_final
from agentctl.domain.verification import TestReport, TestResult

T, C = TestOutcome, VerificationCheckStatus


def result(test_id: str, outcome: T = T.ERROR, message: str | None = None) -> TestResult:
    return TestResult(test_id=test_id, outcome=outcome, message=message)


def test_a_module_that_failed_to_load_is_final_and_a_test_that_failed_is_not() -> None:
    assert is_final(result("unittest.loader._FailedTest.tests.test_idna_properties"))
    assert is_final(result("unittest.loader._FailedTest"))
    assert is_final(result("unittest.loader.ModuleImportFailure.test_x"))
    assert is_final(result("tests/test_props.py",
                           message=f"{COLLECTION_ERROR}ModuleNotFoundError: No module named 'x'"))
    assert is_final(result("t.T.test_a", T.FAILED, "ModuleNotFoundError: No module named 'x'"))
    # pytest's own JUnit report (a command that sets PYTHONPATH itself) on a module
    assert is_final(result("tests/test_props.py::test_props", message="collection failure"))
    assert not is_final(result("t.T.test_a", T.FAILED, "AssertionError: 1 != 2"))
    assert not is_final(result("unittest.loader._FailedTestimony.test_a"))
    assert not is_final(result("unittest.loader._FailedTest.x", T.PASSED))


def test_a_run_whose_only_failures_are_load_failures_has_no_rerun_left() -> None:
    loaded = Observed(status=C.FAILED, report=TestReport(runner="unittest", results=(
        result("unittest.loader._FailedTest.test_props"), result("t.T.test_a", T.PASSED))))
    assert loaded.not_rerun == () and loaded.every_failure_rerun
    assert not loaded.reruns_left(2)
    mixed = Observed(status=C.FAILED, report=TestReport(runner="unittest", results=(
        result("unittest.loader._FailedTest.test_props"), result("t.T.test_a", T.FAILED))))
    assert mixed.not_rerun == ("t.T.test_a",) and mixed.reruns_left(2)
