"""The patch's checks against the same checks on the base commit: which failures the agent
caused (PASS_TO_FAIL), which were there before (FAIL_TO_FAIL), which it fixed (FAIL_TO_PASS),
which tests vanished (PASS_TO_MISSING: passed on the base, did not run with the patch), which it
made unstable (PASS_TO_FLAKY: passed every base run, changes result with the patch) and which
cannot be trusted either way (FLAKY: their result changes on the base too). Pure: the runs are
observed elsewhere and handed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from agentctl.domain.enums import (
    BaselineMode,
    TaskType,
    TestClassification,
    TestOutcome,
    VerificationCheckStatus,
)
from agentctl.domain.final_failures import is_final
from agentctl.domain.verification import ClassifiedTest, TestReport, VerificationCheck

K = TestClassification
T = TestOutcome
C = VerificationCheckStatus
FIX_TASKS = frozenset({TaskType.BUG_FIX, TaskType.TEST_FIX})
# Statuses that say something about the code; a timeout or a broken machine says nothing.
COMPARABLE = frozenset({C.PASSED, C.FAILED})


@dataclass(frozen=True, slots=True, kw_only=True)
class Observed:
    """One check's runs on one tree: the first run's status and tests, then what reruns saw."""

    status: VerificationCheckStatus
    report: TestReport | None = None
    rerun_statuses: tuple[VerificationCheckStatus, ...] = ()
    rerun_outcomes: Mapping[str, tuple[TestOutcome, ...]] = field(default_factory=dict)

    def runs_of(self, test_id: str) -> tuple[TestOutcome, ...]:
        """Every outcome seen for `test_id`: the first run's, then its reruns'."""
        first = self.report.outcome_of(test_id) if self.report else None
        return ((first,) if first is not None else ()) + tuple(self.rerun_outcomes.get(test_id, ()))

    @property
    def failing_ids(self) -> tuple[str, ...]:
        return tuple(r.test_id for r in self.report.failing) if self.report else ()

    @property
    def not_rerun(self) -> tuple[str, ...]:
        """The failing tests no rerun has seen yet, but for those that failed to load (a
        module that cannot import: `is_final`), which are never rerun."""
        failing = self.report.failing if self.report else ()
        return tuple(r.test_id for r in failing
                     if not self.rerun_outcomes.get(r.test_id) and not is_final(r))

    @property
    def every_failure_rerun(self) -> bool:
        """Whether it failed on named tests and each one has been rerun or cannot be (no run
        is left to make; a failure that names no test is rerun whole)."""
        return bool(self.failing_ids) and not self.not_rerun

    def reruns_left(self, reruns: int) -> bool:
        """Whether this failed run, allowed `reruns`, still has some to make in processes of
        their own (what its runner did not rerun in process)."""
        return self.status is C.FAILED and reruns > 0 and not self.every_failure_rerun


def reran_in_process(observed: Observed,
                     reran: Mapping[str, tuple[TestOutcome, ...]]) -> Observed:
    """`observed` with the reruns its runner made of its failing tests in the same process;
    those it did not rerun there (`not_rerun`) are rerun in processes of their own."""
    return replace(observed, rerun_outcomes={
        test_id: reran[test_id] for test_id in observed.failing_ids if reran.get(test_id)})


def baseline_wanted(mode: BaselineMode, task_type: TaskType,
                    checks: Sequence[VerificationCheck], *, must_pass: bool = False) -> bool:
    """`auto` runs the base only where it can change the verdict or show the fix: a required
    check failed, the task is a fix, or it names tests that must pass (each is classified
    against the base). Passing checks of other tasks cost nothing."""
    if mode is BaselineMode.NEVER:
        return False
    if mode is BaselineMode.ALWAYS or task_type in FIX_TASKS or must_pass:
        return True
    return any(c.required and c.status is C.FAILED for c in checks)


def classify(candidate: Observed, base: Observed | None) -> tuple[
        TestClassification | None, tuple[ClassifiedTest, ...]]:
    """The check's class and each test's. Without a base only FLAKY can be told; a test the
    base does not have counts as failing there (SWE-bench's rule for new tests)."""
    tests: list[ClassifiedTest] = []
    if candidate.report is not None:
        for result in candidate.report.results:
            runs = candidate.runs_of(result.test_id)
            if result.outcome is T.SKIPPED:
                continue
            base_runs = base.runs_of(result.test_id) if base is not None else ()
            kind = _classify_test(runs, base_runs, has_base=base is not None)
            if kind is not None:
                tests.append(ClassifiedTest(
                    test_id=result.test_id, classification=kind, candidate=result.outcome,
                    base=next(iter(base_runs), None), message=result.message,
                    base_unknown=not base_runs and not _knows_collection(base)))
    tests += _missing(candidate, base)
    return _classify_check(candidate, base, tests), tuple(tests)


def _missing(candidate: Observed, base: Observed | None) -> list[ClassifiedTest]:
    """Tests that passed on the base and did not run with the patch (deselected, newly skipped,
    removed or renamed). Only a patch run that named every test it ran can show one missing."""
    if base is None or base.report is None or candidate.report is None \
            or not candidate.report.complete or candidate.status not in COMPARABLE:
        return []
    ran = {r.test_id: r.outcome for r in candidate.report.results}
    return [ClassifiedTest(test_id=r.test_id, classification=K.PASS_TO_MISSING,
                           candidate=T.SKIPPED, base=T.PASSED,
                           message="skipped with the patch" if r.test_id in ran
                           else "did not run with the patch")
            for r in base.report.results
            if r.outcome is T.PASSED and ran.get(r.test_id, T.SKIPPED) is T.SKIPPED
            and not _mixed(base.runs_of(r.test_id))]


def flips_to_check_on_base(candidate: Observed, base: Observed) -> tuple[str, ...]:
    """Tests whose result changed between the patch's runs but that passed the one time they ran
    on the base: rerun there, they tell FLAKY (flips on the base too) from PASS_TO_FLAKY."""
    return tuple(test_id for test_id in candidate.rerun_outcomes
                 if _mixed(candidate.runs_of(test_id))
                 and base.runs_of(test_id)[:1] == (T.PASSED,)
                 and len(base.runs_of(test_id)) == 1)


def _classify_test(runs: Sequence[TestOutcome], base_runs: Sequence[TestOutcome], *,
                   has_base: bool) -> TestClassification | None:
    if _mixed(base_runs):
        return K.FLAKY
    if _mixed(runs):
        # flips with the patch only: the patch made a passing test unstable
        return K.PASS_TO_FLAKY if base_runs and base_runs[0] is T.PASSED else K.FLAKY
    if not has_base:
        return None
    failed = _failed(runs[0])
    passed_on_base = bool(base_runs) and base_runs[0] is T.PASSED
    if failed:
        return K.PASS_TO_FAIL if passed_on_base else K.FAIL_TO_FAIL
    return K.PASS_TO_PASS if passed_on_base else K.FAIL_TO_PASS


def _classify_check(candidate: Observed, base: Observed | None,
                    tests: Sequence[ClassifiedTest]) -> TestClassification | None:
    """Per-test classes sum up (the worst first); a check without them is classed whole."""
    if candidate.status not in COMPARABLE:
        return None
    kinds = {t.classification for t in tests}
    for kind in (K.PASS_TO_FAIL, K.PASS_TO_FLAKY, K.PASS_TO_MISSING, K.FLAKY, K.FAIL_TO_FAIL):
        if kind in kinds:
            return kind
    if candidate.status is C.FAILED and candidate.report is not None and candidate.report.failing:
        # failing tests with no class yet: there is no base to compare with
        return None
    statuses = (candidate.status, *candidate.rerun_statuses)
    if len(set(statuses) & COMPARABLE) > 1:
        return K.FLAKY
    if base is None or base.status not in COMPARABLE:
        return None
    base_statuses = {base.status, *base.rerun_statuses} & COMPARABLE
    if len(base_statuses) > 1:
        return K.FLAKY
    if kinds and candidate.status is C.PASSED:
        return K.FAIL_TO_PASS if K.FAIL_TO_PASS in kinds else K.PASS_TO_PASS
    failed, failed_on_base = candidate.status is C.FAILED, base.status is C.FAILED
    if failed:
        return K.FAIL_TO_FAIL if failed_on_base else K.PASS_TO_FAIL
    return K.FAIL_TO_PASS if failed_on_base else K.PASS_TO_PASS


def classified(check: VerificationCheck, candidate: Observed, base: Observed | None,
               base_commit: str | None, cached: bool | None) -> VerificationCheck:
    """The check with its classes, and where they came from."""
    kind, tests = classify(candidate, base)
    return replace(check, classification=kind, classified_tests=tests,
                   baseline_commit=base_commit if base is not None else None,
                   baseline_cached=cached if base is not None else None)


def _knows_collection(base: Observed | None) -> bool:
    """Whether a test missing from the base's report did not run there: only when the base's
    runner named every test it ran."""
    return base is not None and base.report is not None and base.report.complete


def _mixed(runs: Sequence[TestOutcome]) -> bool:
    seen = {_failed(outcome) for outcome in runs if outcome is not T.SKIPPED}
    return len(seen) > 1


def _failed(outcome: TestOutcome) -> bool:
    return outcome in (T.FAILED, T.ERROR)
