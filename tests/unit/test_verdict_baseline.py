"""The verdict with a baseline: whose failure a red check is (PASS_TO_FAIL the agent's,
FAIL_TO_FAIL not, FLAKY nobody's), exhaustively over the classes a run can show; and the pure
classification those classes come from."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from agentctl.domain.baseline import Observed, baseline_wanted, classify, reran_in_process
from agentctl.domain.enums import (
    BaselineMode,
    PrEligibility,
    TaskType,
    TestClassification,
    TestOutcome,
    VerdictStatus,
    VerificationCheckStatus,
)
from agentctl.domain.verdict_baseline import Intent
from agentctl.domain.verification import (
    ClassifiedTest,
    TestReport,
    TestResult,
    VerificationCheck,
    VerificationReport,
    overall_status,
)
from tests.unit.conftest import T0
from tests.unit.test_verdict import decide

K, V, T, C = TestClassification, VerdictStatus, TestOutcome, VerificationCheckStatus
BASE = "c" * 40  # the base commit of tests.unit.test_verdict.patch()
NEW = "NEW"  # a failing test the base does not have (FAIL_TO_FAIL with no base outcome)


def classified_test(kind: K | str, name: str) -> ClassifiedTest:
    if kind == NEW:
        return ClassifiedTest(test_id=name, classification=K.FAIL_TO_FAIL, candidate=T.FAILED,
                              base=None, message="assert 1 == 2")
    assert isinstance(kind, K)
    failing = kind in (K.PASS_TO_FAIL, K.FAIL_TO_FAIL, K.FLAKY)
    on_base = T.PASSED if kind in (K.PASS_TO_PASS, K.PASS_TO_FAIL, K.FLAKY) else T.FAILED
    return ClassifiedTest(test_id=name, classification=kind,
                          candidate=T.FAILED if failing else T.PASSED, base=on_base,
                          message="assert 1 == 2" if failing else None)


def check(*tests: ClassifiedTest, classification: K | None = None,
          status: C | None = None, required: bool = True, name: str = "unit",
          failing: tuple[str, ...] | None = None) -> VerificationCheck:
    failed = [t.test_id for t in tests if t.candidate is T.FAILED]
    status = status or (C.FAILED if failed else C.PASSED)
    return VerificationCheck(
        name=name, command=f"pytest {name}", status=status,
        exit_code=0 if status is C.PASSED else 1, duration_seconds=1.0, log_artifact="log",
        summarized_failure=None if status is C.PASSED else f"`pytest {name}` failed (exit 1)",
        required=required, failing_test_ids=tuple(failed) if failing is None else failing,
        classification=classification, classified_tests=tests, baseline_commit=BASE,
        baseline_cached=False)


def report(*checks: VerificationCheck) -> VerificationReport:
    return VerificationReport(verification_report_id="verification_1", run_id="run_1",
                              attempt_id="attempt_1", status=overall_status(checks),
                              checks=checks, full_report_artifact="artifact_verifier",
                              started_at=T0, ended_at=T0)


def test_a_test_that_passed_on_base_and_fails_now_fails_verification_naming_it() -> None:
    decision = decide(verification=report(check(
        classified_test(K.PASS_TO_FAIL, "tests/test_x.py::test_y"), classified_test(K.PASS_TO_PASS, "t2"),
        classification=K.PASS_TO_FAIL)))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (
        f"tests/test_x.py::test_y (assert 1 == 2) failed; it passed on base {BASE[:12]}",)
    link = next(link for link in decision.chain if link.check == "baseline")
    assert not link.passed and link.detail == (f"on base {BASE[:12]}: 1 PASS_TO_FAIL, "
                                               "1 PASS_TO_PASS")


def test_only_preexisting_failures_need_review_and_say_how_many() -> None:
    decision = decide(verification=report(check(
        classified_test(K.FAIL_TO_FAIL, "a"), classified_test(K.FAIL_TO_FAIL, "b"),
        classified_test(K.FAIL_TO_PASS, "c"),
        classification=K.FAIL_TO_FAIL)))
    assert decision.status is V.SUCCESS_NEEDS_REVIEW
    assert decision.pr_eligibility is PrEligibility.ELIGIBLE_AFTER_HUMAN_APPROVAL
    assert decision.reasons[0] == (f"2 tests already failed on base {BASE[:12]} and still fail "
                                   "(not blamed): a, b")


def test_preexisting_failures_fail_when_they_are_not_allowed() -> None:
    decision = decide(allow_preexisting_failures=False, verification=report(check(
        classified_test(K.FAIL_TO_FAIL, "a"), classification=K.FAIL_TO_FAIL)))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (f"1 test already failed on base {BASE[:12]} and still fails "
                                "(not blamed): a, and verification.allow_preexisting_failures "
                                "is false",)


def test_a_flaky_failure_is_neither_the_agents_failure_nor_a_clean_pass() -> None:
    failed = decide(verification=report(check(classified_test(K.FLAKY, "f"), classification=K.FLAKY)))
    passed = decide(verification=report(check(
        replace(classified_test(K.FLAKY, "f"), candidate=T.PASSED), classification=K.FLAKY)))
    for decision in (failed, passed):
        assert decision.status is V.SUCCESS_NEEDS_REVIEW
        assert decision.reasons[0] == "flaky: f changed result between runs of the same code"


def test_a_failing_test_the_base_does_not_have_is_the_agents() -> None:
    decision = decide(verification=report(check(classified_test(NEW, "tests/test_new.py::test_n"),
                                                classification=K.FAIL_TO_FAIL)))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (f"tests/test_new.py::test_n (assert 1 == 2) fails, and base "
                                f"{BASE[:12]} does not have it",)


def test_a_failing_test_without_a_class_is_the_agents_even_when_another_is_flaky() -> None:
    decision = decide(verification=report(check(classified_test(K.FLAKY, "f"), classification=K.FLAKY,
                                                failing=("f", "g"))))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == ("g failed in `pytest unit`, with no baseline to compare",)


@pytest.mark.parametrize(("kind", "expected"), [
    (K.PASS_TO_FAIL, V.FAILED_VERIFICATION), (K.FAIL_TO_FAIL, V.FAILED_VERIFICATION),
    (K.FLAKY, V.SUCCESS_NEEDS_REVIEW), (None, V.FAILED_VERIFICATION),
])
def test_a_whole_check_without_per_test_results_is_judged_by_its_class(
        kind: K | None, expected: V) -> None:
    decision = decide(verification=report(check(classification=kind, status=C.FAILED)))
    assert decision.status is expected
    if kind is K.PASS_TO_FAIL:
        assert decision.reasons == (f"`pytest unit` failed (exit 1); it passed on base "
                                    f"{BASE[:12]}",)


def test_a_timed_out_check_stays_a_failure_whatever_the_baseline_says() -> None:
    decision = decide(verification=report(
        check(classified_test(K.FAIL_TO_FAIL, "a"), classification=K.FAIL_TO_FAIL),
        check(status=C.TIMED_OUT, name="slow")))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons[0] == "`pytest slow` failed (exit 1)"


def test_an_infrastructure_failure_stays_one_whatever_the_baseline_says() -> None:
    decision = decide(verification=report(
        check(classified_test(K.FAIL_TO_FAIL, "a"), classification=K.FAIL_TO_FAIL),
        check(status=C.INFRA_FAILURE, name="net")))
    assert decision.status is V.FAILED_INFRASTRUCTURE


def test_a_failing_optional_check_is_not_excused_into_a_failure() -> None:
    decision = decide(verification=report(
        check(classified_test(K.PASS_TO_PASS, "a"), classification=K.PASS_TO_PASS),
        check(classified_test(K.PASS_TO_FAIL, "b"), classification=K.PASS_TO_FAIL, required=False,
              name="lint")))
    assert decision.status is V.SUCCESS_NEEDS_REVIEW
    assert decision.reasons[0] == "verification PARTIAL: not every deterministic check passed"


KINDS: tuple[K | str, ...] = (K.PASS_TO_FAIL, NEW, K.FAIL_TO_FAIL, K.FLAKY, K.FAIL_TO_PASS,
                              K.PASS_TO_PASS)


def expected_status(kinds: set[K | str], allow: bool) -> V:
    if K.PASS_TO_FAIL in kinds or NEW in kinds:
        return V.FAILED_VERIFICATION
    if K.FAIL_TO_FAIL in kinds and not allow:
        return V.FAILED_VERIFICATION
    if K.FAIL_TO_FAIL in kinds or K.FLAKY in kinds:
        return V.SUCCESS_NEEDS_REVIEW
    return V.SUCCESS


@pytest.mark.parametrize("allow", [True, False])
@pytest.mark.parametrize("present", [
    combination for size in range(1, len(KINDS) + 1)
    for combination in itertools.combinations(KINDS, size)], ids=lambda c: "+".join(map(str, c)))
def test_every_mix_of_classes_gets_the_verdict_the_rules_give(
        present: tuple[K | str, ...], allow: bool) -> None:
    tests = tuple(classified_test(kind, f"t{n}") for n, kind in enumerate(present))
    whole, _ = classify_summary(tests)
    decision = decide(allow_preexisting_failures=allow,
                      verification=report(check(*tests, classification=whole)))
    assert decision.status is expected_status(set(present), allow)


def classify_summary(tests: tuple[ClassifiedTest, ...]) -> tuple[K, None]:
    kinds = {t.classification for t in tests}
    for kind in (K.PASS_TO_FAIL, K.FLAKY, K.FAIL_TO_FAIL, K.FAIL_TO_PASS):
        if kind in kinds:
            return kind, None
    return K.PASS_TO_PASS, None


# --- classification -------------------------------------------------------------------------

def observed(status: C, *results: tuple[str, T], reruns: dict[str, tuple[T, ...]] | None = None,
             rerun_statuses: tuple[C, ...] = ()) -> Observed:
    return Observed(status=status, report=TestReport(runner="pytest", results=tuple(
        TestResult(test_id=test_id, outcome=outcome) for test_id, outcome in results)),
        rerun_outcomes=reruns or {}, rerun_statuses=rerun_statuses)


def test_reruns_made_in_process_leave_the_other_failing_tests_to_rerun() -> None:
    base = observed(C.FAILED, ("a", T.FAILED), ("b", T.ERROR), ("c", T.PASSED))
    reran = {"a": (T.FAILED, T.FAILED), "b": (T.PASSED,), "c": (T.PASSED,)}
    every = reran_in_process(base, reran)
    assert every.rerun_outcomes == {"a": (T.FAILED, T.FAILED), "b": (T.PASSED,)}
    assert every.not_rerun == () and every.every_failure_rerun
    assert every.runs_of("b") == (T.ERROR, T.PASSED)
    some = reran_in_process(base, {"a": (T.FAILED,), "b": ()})
    assert some.not_rerun == ("b",) and not some.every_failure_rerun
    assert reran_in_process(base, {}) == base
    unnamed = reran_in_process(observed(C.FAILED, ("c", T.PASSED)), {})
    assert not unnamed.every_failure_rerun  # a failure that names no test: the whole check


def test_each_test_is_classified_against_its_base_outcome() -> None:
    candidate = observed(C.FAILED, ("fixed", T.PASSED), ("kept", T.PASSED), ("broke", T.FAILED),
                         ("still", T.ERROR), ("new", T.PASSED), ("skip", T.SKIPPED))
    base = observed(C.FAILED, ("fixed", T.FAILED), ("kept", T.PASSED), ("broke", T.PASSED),
                    ("still", T.FAILED), ("skip", T.PASSED))
    whole, tests = classify(candidate, base)
    assert {t.test_id: t.classification for t in tests} == {
        "fixed": K.FAIL_TO_PASS, "kept": K.PASS_TO_PASS, "broke": K.PASS_TO_FAIL,
        "still": K.FAIL_TO_FAIL, "skip": K.PASS_TO_MISSING}
    assert whole is K.PASS_TO_FAIL


def test_a_test_that_flips_on_the_base_is_flaky_and_one_that_flips_only_on_the_patch_is_not(
) -> None:
    candidate = observed(C.FAILED, ("rerun", T.FAILED), ("base-flip", T.PASSED),
                         reruns={"rerun": (T.PASSED,)})
    base = observed(C.FAILED, ("rerun", T.PASSED), ("base-flip", T.FAILED),
                    reruns={"base-flip": (T.FAILED, T.PASSED), "rerun": (T.PASSED,) * 4})
    whole, tests = classify(candidate, base)
    assert {t.test_id: t.classification for t in tests} == {"rerun": K.PASS_TO_FLAKY,
                                                            "base-flip": K.FLAKY}
    assert whole is K.PASS_TO_FLAKY


def test_without_a_base_only_flakiness_can_be_told() -> None:
    whole, tests = classify(observed(C.FAILED, ("a", T.FAILED), ("b", T.FAILED),
                                     reruns={"a": (T.FAILED, T.PASSED), "b": (T.FAILED,)}), None)
    assert [(t.test_id, t.classification) for t in tests] == [("a", K.FLAKY)]
    assert whole is K.FLAKY


@pytest.mark.parametrize(("candidate", "reruns", "base", "expected"), [
    (C.PASSED, (), C.FAILED, K.FAIL_TO_PASS), (C.PASSED, (), C.PASSED, K.PASS_TO_PASS),
    (C.FAILED, (C.FAILED,), C.PASSED, K.PASS_TO_FAIL),
    (C.FAILED, (C.FAILED,), C.FAILED, K.FAIL_TO_FAIL),
    (C.FAILED, (C.PASSED,), C.PASSED, K.FLAKY), (C.TIMED_OUT, (), C.PASSED, None),
    (C.FAILED, (), C.TIMED_OUT, None),
])
def test_a_check_without_per_test_results_is_classified_whole(
        candidate: C, reruns: tuple[C, ...], base: C, expected: K | None) -> None:
    whole, tests = classify(Observed(status=candidate, rerun_statuses=reruns),
                            Observed(status=base))
    assert (whole, tests) == (expected, ())


def check_with(status: C, required: bool = True) -> VerificationCheck:
    return check(status=status, required=required)


@pytest.mark.parametrize(("mode", "task", "status", "required", "wanted"), [
    (BaselineMode.NEVER, TaskType.BUG_FIX, C.FAILED, True, False),
    (BaselineMode.ALWAYS, TaskType.REFACTOR, C.PASSED, True, True),
    (BaselineMode.AUTO, TaskType.REFACTOR, C.PASSED, True, False),
    (BaselineMode.AUTO, TaskType.REFACTOR, C.FAILED, True, True),
    (BaselineMode.AUTO, TaskType.REFACTOR, C.FAILED, False, False),
    (BaselineMode.AUTO, TaskType.REFACTOR, C.TIMED_OUT, True, False),
    (BaselineMode.AUTO, TaskType.BUG_FIX, C.PASSED, True, True),
    (BaselineMode.AUTO, TaskType.TEST_FIX, C.PASSED, True, True),
])
def test_auto_runs_the_baseline_only_where_it_can_change_the_verdict(
        mode: BaselineMode, task: TaskType, status: C, required: bool, wanted: bool) -> None:
    assert baseline_wanted(mode, task, [check_with(status, required)]) is wanted


def test_a_test_the_base_counted_but_did_not_name_is_not_known_there_never_absent() -> None:
    """unittest without its hook counts passes it does not name: a failing test missing from
    such a base report may well have passed there."""
    candidate = observed(C.FAILED, ("t.A.test_x", T.FAILED))
    counted = Observed(status=C.PASSED, report=TestReport(runner="unittest", results=(),
                                                          unnamed_passed=4))
    _, (unknown,) = classify(candidate, counted)
    assert (unknown.base, unknown.base_unknown) == (None, True)
    _, (absent,) = classify(candidate, observed(C.PASSED, ("t.A.test_y", T.FAILED)))
    assert (absent.base, absent.base_unknown) == (None, False)
    decision = decide(verification=report(check(unknown, classification=K.FAIL_TO_FAIL)))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (f"t.A.test_x fails; its result on base {BASE[:12]} is not known "
                                "(the runner did not name it)",)


# --- the task's intent -----------------------------------------------------------------------

FIX = Intent(fix=True)


def test_a_fix_whose_test_still_fails_is_failed_verification_not_review() -> None:
    decision = decide(intent=FIX, verification=report(check(
        classified_test(K.FAIL_TO_FAIL, "tests/test_error.py::test_module_name"),
        classification=K.FAIL_TO_FAIL)))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (f"the fix is not shown: no test fails on base {BASE[:12]}'s "
                                "code and passes with the patch; "
                                "tests/test_error.py::test_module_name still failing",)


def test_a_fix_needs_a_test_that_failed_on_base_and_passes_now() -> None:
    unchanged = decide(intent=FIX, verification=report(check(
        classified_test(K.PASS_TO_PASS, "a"), classification=K.PASS_TO_PASS)))
    assert unchanged.status is V.FAILED_VERIFICATION
    assert unchanged.reasons == (f"the fix is not shown: no test fails on base {BASE[:12]}'s "
                                 "code and passes with the patch",)
    fixed = decide(intent=FIX, verification=report(check(
        classified_test(K.FAIL_TO_PASS, "a"), classified_test(K.PASS_TO_PASS, "b"),
        classification=K.FAIL_TO_PASS)))
    assert fixed.status is V.SUCCESS


def test_a_whole_check_fail_to_pass_on_a_bug_fix_is_not_the_fix_shown() -> None:
    """A runner that names no tests, compared as a whole: the base failed and the patch passes,
    but no test says what was fixed (an exit code the patch can make 0 is not a test)."""
    decision = decide(intent=FIX, verification=report(check(classification=K.FAIL_TO_PASS)))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (f"the fix is not shown: no test fails on base {BASE[:12]}'s "
                                "code and passes with the patch (`pytest unit` does not name its "
                                "tests: compared as a whole, a check never shows a fix)",)


def test_other_task_types_keep_the_preexisting_failure_rule() -> None:
    decision = decide(intent=Intent(), verification=report(check(
        classified_test(K.FAIL_TO_FAIL, "a"), classification=K.FAIL_TO_FAIL)))
    assert decision.status is V.SUCCESS_NEEDS_REVIEW


def test_each_must_pass_test_that_does_not_pass_fails_verification() -> None:
    tests = (classified_test(K.FAIL_TO_PASS, "fixed"), classified_test(K.FAIL_TO_FAIL, "still"),
             classified_test(K.FAIL_TO_FAIL, "unrelated"))
    decision = decide(intent=Intent(fix=True, must_pass=("fixed", "still", "never-ran")),
                      verification=report(check(*tests, classification=K.FAIL_TO_FAIL)))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (
        "must-pass test still does not pass (FAIL_TO_FAIL, FAILED with the patch)",
        "must-pass test never-ran was not seen to pass: no check ran it")


def test_with_its_must_pass_tests_passing_an_unrelated_old_failure_is_a_humans_call() -> None:
    decision = decide(intent=Intent(fix=True, must_pass=("fixed",)), verification=report(check(
        classified_test(K.FAIL_TO_PASS, "fixed"), classified_test(K.FAIL_TO_FAIL, "unrelated"),
        classification=K.FAIL_TO_FAIL)))
    assert decision.status is V.SUCCESS_NEEDS_REVIEW
    assert decision.reasons[0] == (f"1 test already failed on base {BASE[:12]} and still fails "
                                   "(not blamed): unrelated")


def missing(name: str) -> ClassifiedTest:
    return ClassifiedTest(test_id=name, classification=K.PASS_TO_MISSING, candidate=T.SKIPPED,
                          base=T.PASSED, message="did not run with the patch")


def test_a_test_that_vanished_fails_verification_even_when_the_check_passed() -> None:
    vanished = report(check(missing("tests/test_calc.py::test_add"),
                            classified_test(K.PASS_TO_PASS, "b"),
                            classification=K.PASS_TO_MISSING, status=C.PASSED))
    decision = decide(verification=vanished)
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (
        f"tests/test_calc.py::test_add passed on base {BASE[:12]} and did not run with the patch "
        "(PASS_TO_MISSING; a task that removes tests says --allow-removed-tests)",)
    allowed = decide(verification=vanished, intent=Intent(allow_removed_tests=True))
    assert allowed.status is V.SUCCESS


def test_a_test_the_patch_made_flaky_fails_verification() -> None:
    made_flaky = ClassifiedTest(test_id="t", classification=K.PASS_TO_FLAKY, candidate=T.FAILED,
                                base=T.PASSED, message="boom")
    decision = decide(verification=report(check(made_flaky, classification=K.PASS_TO_FLAKY)))
    assert decision.status is V.FAILED_VERIFICATION
    assert f"t passed on every run on base {BASE[:12]}; the patch made it flaky" in \
        decision.reasons


def test_a_test_skipped_with_the_patch_that_passed_on_base_is_pass_to_missing() -> None:
    candidate = Observed(status=C.PASSED, report=TestReport(runner="pytest", results=(
        TestResult(test_id="kept", outcome=T.PASSED),
        TestResult(test_id="skipped", outcome=T.SKIPPED))))
    base = observed(C.PASSED, ("kept", T.PASSED), ("skipped", T.PASSED), ("gone", T.PASSED),
                    ("was-skipped", T.SKIPPED))
    whole, tests = classify(candidate, base)
    assert {t.test_id: (t.classification, t.message) for t in tests} == {
        "kept": (K.PASS_TO_PASS, None),
        "skipped": (K.PASS_TO_MISSING, "skipped with the patch"),
        "gone": (K.PASS_TO_MISSING, "did not run with the patch")}
    assert whole is K.PASS_TO_MISSING
    unnamed = Observed(status=C.PASSED, report=TestReport(runner="unittest", results=(),
                                                          unnamed_passed=3))
    assert classify(unnamed, base)[1] == ()  # a patch run that names nothing proves no absence


def test_many_tests_of_one_file_failing_the_same_way_fold_into_one_reason() -> None:
    broken = [classified_test(K.PASS_TO_FAIL, f"tests/test_ordinal.py::test_{n}")
              for n in range(24)]
    decision = decide(verification=report(check(
        *broken, classified_test(K.PASS_TO_FAIL, "tests/test_other.py::test_z"),
        classified_test(K.PASS_TO_PASS, "tests/test_other.py::test_ok"),
        classification=K.PASS_TO_FAIL)))
    assert decision.status is V.FAILED_VERIFICATION
    assert decision.reasons == (
        f"24 tests in tests/test_ordinal.py failed; they passed on base {BASE[:12]}: "
        "e.g. test_0 (assert 1 == 2), test_1, test_2",
        f"tests/test_other.py::test_z (assert 1 == 2) failed; it passed on base {BASE[:12]}")


def test_unittest_ids_fold_by_class_and_three_of_a_kind_stay_one_line_each() -> None:
    folded = [classified_test(K.PASS_TO_FAIL, f"test_calc.AddTest.test_add_{n}")
              for n in range(4)]
    three = [classified_test(K.PASS_TO_FAIL, f"test_calc.MulTest.test_mul_{n}")
             for n in range(3)]
    decision = decide(verification=report(check(*folded, *three,
                                                classification=K.PASS_TO_FAIL)))
    assert decision.reasons[0] == (f"4 tests in test_calc.AddTest failed; they passed on base "
                                   f"{BASE[:12]}: e.g. test_add_0 (assert 1 == 2), test_add_1, "
                                   "test_add_2")
    assert decision.reasons[1:] == tuple(
        f"test_calc.MulTest.test_mul_{n} (assert 1 == 2) failed; it passed on base {BASE[:12]}"
        for n in range(3))


def test_new_failing_tests_of_one_file_fold_too() -> None:
    decision = decide(verification=report(check(
        *(classified_test(NEW, f"tests/test_new.py::test_{n}") for n in range(5)),
        classification=K.FAIL_TO_FAIL)))
    assert decision.reasons == (f"5 tests in tests/test_new.py fail, and base {BASE[:12]} does "
                                "not have them: e.g. test_0 (assert 1 == 2), test_1, test_2",)


def test_reasons_are_capped_with_how_many_more() -> None:
    files = [classified_test(K.PASS_TO_FAIL, f"tests/test_{n}.py::test_a") for n in range(25)]
    decision = decide(verification=report(check(*files, classification=K.PASS_TO_FAIL)))
    assert len(decision.reasons) == 10
    assert decision.reasons[0].startswith("tests/test_0.py::test_a (assert 1 == 2) failed")
    assert decision.reasons[-1] == "+16 more (every test and its class: `verdict explain --all`)"
