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


@dataclass(frozen=True, slots=True, kw_only=True)
class SideRuns:
    """The runs beside the base that a patch with a test side gets (DESIGN.md section 9):
    `fix`, the base's code under the patch's tests (which tests fail without the fix), and
    `regression`, the patch's code under the base's tests (no test that passed on the base
    may fail there). `changed_files`: the test-side files the patch changed. With a test patch
    the task supplies, `fix` is the base's code under it, `regression` the patch's code under
    the base's tests and it, and `supplied_files` the files it touches: their tests are judged
    there alone (SWE-bench's FAIL_TO_PASS), whatever the patch did to them."""

    fix: Observed | None = None
    regression: Observed | None = None
    changed_files: frozenset[str] = frozenset()
    supplied_files: frozenset[str] = frozenset()


NO_SIDES = SideRuns()
BLAME_RUNS = 5  # clean base runs it takes to blame the patch for a flaky test


def classify(candidate: Observed, base: Observed | None, sides: SideRuns = NO_SIDES, *,
             blame_runs: int = BLAME_RUNS) -> tuple[TestClassification | None,
                                                    tuple[ClassifiedTest, ...]]:
    """The check's class and each test's. Without a base only FLAKY can be told. A test counts
    as FAIL_TO_PASS only where the same test file fails on the base's code (the base's run, or
    with a test side the fix evidence) and passes with the whole patch: a new test that passes
    on the base's code shows nothing, nor does an expectation edited to match the bug."""
    if base is not None:
        candidate = aligned(candidate, base)
        sides = replace(sides, fix=aligned(sides.fix, base) if sides.fix else None,
                        regression=aligned(sides.regression, base) if sides.regression else None)
    tests: list[ClassifiedTest] = _supplied(sides)
    if candidate.report is not None:
        for result in candidate.report.results:
            runs = candidate.runs_of(result.test_id)
            if result.outcome is T.SKIPPED or _changed_file(result.test_id,
                                                            sides.supplied_files):
                continue
            base_runs = _runs_in(base, result.test_id)
            kind = _classify_test(runs, base_runs, has_base=base is not None,
                                  blame_runs=blame_runs)
            shown = kind
            if kind in (K.FAIL_TO_PASS, K.PASS_TO_PASS):
                shown = _fix_evidence(result.test_id, kind, base_runs, sides)
                kind = _confirmed(result.test_id, shown, base_runs, sides)
            if kind is not None:
                tests.append(ClassifiedTest(
                    test_id=result.test_id, classification=kind, candidate=result.outcome,
                    base=next(iter(base_runs), None),
                    message=_UNCONFIRMED if kind is not shown else result.message,
                    base_unknown=not base_runs and not _knows_collection(base),
                    expectations_changed=_expectations_changed(result.test_id, shown, sides)))
    tests += _regressions(candidate, base, sides, {t.test_id for t in tests
                                                   if t.classification is K.PASS_TO_FAIL})
    return _classify_check(candidate, base, tests), tuple(tests)


def _supplied(sides: SideRuns) -> list[ClassifiedTest]:
    """The tests of the task's test patch, each as SWE-bench judges it: its outcome on the
    base's code (the fix evidence) against its outcome on the patch's code (the regression
    evidence), both with the test patch applied; the patch's own version never counts."""
    fix, judged = sides.fix, sides.regression
    if not sides.supplied_files or judged is None or judged.report is None:
        return []
    out: list[ClassifiedTest] = []
    for result in judged.report.results:
        test_id = result.test_id
        if result.outcome is T.SKIPPED or not _changed_file(test_id, sides.supplied_files):
            continue
        before = _runs_in(fix, test_id)
        kind = _classify_test(judged.runs_of(test_id), before, has_base=True)
        if kind is not None:
            out.append(ClassifiedTest(
                test_id=test_id, classification=kind, candidate=result.outcome,
                base=next(iter(before), None), message=result.message,
                base_unknown=not before and not _knows_collection(fix)))
    return out


def _fix_evidence(test_id: str, kind: TestClassification, base_runs: Sequence[TestOutcome],
                  sides: SideRuns) -> TestClassification | None:
    """A test that passes with the patch, classed by the same test file on the base's code:
    with a test side, the fix evidence decides (the patch's version of the test failing there
    is FAIL_TO_PASS, whatever the base's own version did; passing there, PASS_TO_PASS); else
    the base's run does. None where nothing shows it without the fix (a test the base does not
    have, and no fix evidence has it)."""
    there = _runs_in(sides.fix, test_id) if sides.fix is not None else ()
    if there:
        return K.FAIL_TO_PASS if _failed(there[0]) else K.PASS_TO_PASS
    return kind if base_runs else None


_UNCONFIRMED = "passes only with the patch's tests: its base version fails with the patch's code"


def _confirmed(test_id: str, kind: TestClassification | None, base_runs: Sequence[TestOutcome],
               sides: SideRuns) -> TestClassification | None:
    """A FAIL_TO_PASS of a test the base has, confirmed by the regression evidence: its base
    version must pass with the patch's code under the base's tests too. Otherwise its pass is
    the patch's test side's word (a conftest can report passed only beside the patch's code,
    failing honestly in the fix evidence): it failed on the base and still does (FAIL_TO_FAIL),
    or, where it passed on the base, PASS_TO_PASS, left to the rules on its base version
    (`_regressions`, `_expectations_changed`). A new test has no base version to run there:
    its fix evidence and the runner's own checks are all there is."""
    if kind is not K.FAIL_TO_PASS or not base_runs or sides.regression is None:
        return kind
    there = _runs_in(sides.regression, test_id)
    if there[:1] == (T.PASSED,):
        return kind
    return K.FAIL_TO_FAIL if _failed(base_runs[0]) else K.PASS_TO_PASS


def _expectations_changed(test_id: str, kind: TestClassification | None,
                          sides: SideRuns) -> bool:
    """The patch's version of the test passes with the patch's code, the base's version fails
    with it: the patch changed what the test expects."""
    if sides.regression is None or kind not in (K.PASS_TO_PASS, K.FAIL_TO_PASS):
        return False
    if not _changed_file(test_id, sides.changed_files):
        return False
    there = _runs_in(sides.regression, test_id)
    return bool(there) and _failed(there[0])


def _regressions(candidate: Observed, base: Observed | None, sides: SideRuns,
                 known: set[str]) -> list[ClassifiedTest]:
    """The tests that passed on the base and fail, or vanish, with the patch: with the patch's
    tests (the candidate) or under the base's own (the regression evidence), so renaming,
    skipping, editing, deleting or deselecting a test cannot hide one. A test the patch's
    version still passes (its expectations changed) is left to `_expectations_changed`."""
    if base is None or base.report is None:
        return []
    ran = {r.test_id: r.outcome for r in candidate.report.results} \
        if candidate.report is not None else {}
    regression = sides.regression
    out: list[ClassifiedTest] = []
    for result in base.report.results:
        test_id = result.test_id
        if result.outcome is not T.PASSED or test_id in known or _mixed(base.runs_of(test_id)) \
                or _changed_file(test_id, sides.supplied_files):  # judged by `_supplied`
            continue
        there = _runs_in(regression, test_id) if regression is not None else ()
        with_patch = ran.get(test_id)
        if there and _failed(there[0]) and (with_patch is None or with_patch is T.SKIPPED
                                            or not _changed_file(test_id, sides.changed_files)):
            out.append(ClassifiedTest(
                test_id=test_id, classification=K.PASS_TO_FAIL, base=T.PASSED,
                candidate=there[0], message="its base version fails with the patch's code"))
            continue
        if not _comparable(candidate) or (with_patch is not None and with_patch is not T.SKIPPED):
            continue
        message = ("skipped with the patch" if with_patch is T.SKIPPED
                   else "did not run with the patch")
        if regression is not None and _comparable(regression) and there[:1] == (T.SKIPPED,):
            message = "its base version is skipped with the patch's code"
        out.append(ClassifiedTest(test_id=test_id, classification=K.PASS_TO_MISSING,
                                  candidate=T.SKIPPED, base=T.PASSED, message=message))
    return out


def _comparable(observed: Observed) -> bool:
    """Only a run that named every test it ran can show one missing."""
    return observed.report is not None and observed.report.complete \
        and observed.status in COMPARABLE


def aligned(observed: Observed, reference: Observed) -> Observed:
    """`observed` with its parametrized test ids that `reference` lacks renamed to those of the
    same test function at the same place among its unmatched ones: ids that differ only by a
    value drawn at collection (a time, a random number, an address) are the same test."""
    if observed.report is None or reference.report is None:
        return observed
    known = {r.test_id for r in observed.report.results}
    theirs: dict[str, list[str]] = {}
    for result in reference.report.results:
        if "[" in result.test_id and result.test_id not in known:
            theirs.setdefault(result.test_id.split("[", 1)[0], []).append(result.test_id)
    if not theirs:
        return observed
    reference_ids = {r.test_id for r in reference.report.results}
    renamed: dict[str, str] = {}
    for result in observed.report.results:
        test_id = result.test_id
        if "[" not in test_id or test_id in reference_ids:
            continue
        free = theirs.get(test_id.split("[", 1)[0])
        if free:
            renamed[test_id] = free.pop(0)
    if not renamed:
        return observed
    report = replace(observed.report, results=tuple(
        replace(r, test_id=renamed.get(r.test_id, r.test_id)) for r in observed.report.results))
    return replace(observed, report=report, rerun_outcomes={
        renamed.get(t, t): o for t, o in observed.rerun_outcomes.items()})


def _runs_in(observed: Observed | None, test_id: str) -> tuple[TestOutcome, ...]:
    """Every outcome `observed` has for `test_id`; where it has none but its file (a pytest
    module, a unittest module) could not be collected there, that error: a test whose module
    fails to import failed there, it is never absent."""
    if observed is None:
        return ()
    runs = observed.runs_of(test_id)
    if runs or observed.report is None:
        return runs
    file = _file_of(test_id)
    module = test_id.rsplit(".", 2)[0] if "::" not in test_id else None
    for result in observed.report.failing:
        if result.test_id == file or (module and result.test_id.endswith(
                f"_FailedTest.{module}")) or (module and result.test_id == module):
            return (T.ERROR,)
    return ()


def _changed_file(test_id: str, changed: frozenset[str]) -> bool:
    """Whether the test's file is one the patch changed: a pytest node id's path, or a dotted
    unittest id's module."""
    if "::" in test_id:
        return _file_of(test_id) in changed
    parts = test_id.split(".")
    return any(".".join(parts[:n]) in changed for n in range(1, len(parts)))


def _file_of(test_id: str) -> str:
    """The test's file as its id names it (a pytest node id's path, else the id itself)."""
    return test_id.split("::", 1)[0]


def flips_to_check_on_base(candidate: Observed, base: Observed, *,
                           blame_runs: int = BLAME_RUNS) -> tuple[str, ...]:
    """Tests whose result changed between the patch's runs but that passed every time they ran
    on the base, fewer times than it takes to blame the patch: rerun there, they tell FLAKY
    (flips on the base too) from PASS_TO_FLAKY."""
    return tuple(test_id for test_id in candidate.rerun_outcomes
                 if _mixed(candidate.runs_of(test_id))
                 and base.runs_of(test_id)[:1] == (T.PASSED,)
                 and not _mixed(base.runs_of(test_id))
                 and len(base.runs_of(test_id)) < _needed(candidate.runs_of(test_id),
                                                          blame_runs))


def _needed(runs: Sequence[TestOutcome], blame_runs: int) -> int:
    """Clean base runs that blame the patch for flipping: as many as the patch took to flip,
    and at least `blame_runs`."""
    first = _failed(runs[0])
    flip = next((i for i, o in enumerate(runs) if o is not T.SKIPPED and _failed(o) != first),
                len(runs) - 1)
    return max(blame_runs, flip + 1)


def _classify_test(runs: Sequence[TestOutcome], base_runs: Sequence[TestOutcome], *,
                   has_base: bool, blame_runs: int = BLAME_RUNS) -> TestClassification | None:
    if _mixed(base_runs):
        return K.FLAKY
    if _mixed(runs):
        # flips with the patch only, and the base passed enough runs to say so
        clean = sum(1 for o in base_runs if o is T.PASSED)
        return K.PASS_TO_FLAKY if base_runs and base_runs[0] is T.PASSED \
            and clean >= _needed(runs, blame_runs) else K.FLAKY
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
               base_commit: str | None, cached: bool | None, sides: SideRuns = NO_SIDES, *,
               blame_runs: int = BLAME_RUNS) -> VerificationCheck:
    """The check with its classes, and where they came from."""
    kind, tests = classify(candidate, base, sides, blame_runs=blame_runs)
    runs = tuple(name for name, run in (("fix evidence", sides.fix),
                                        ("regression evidence", sides.regression)) if run)
    return replace(check, classification=kind, classified_tests=tests,
                   baseline_commit=base_commit if base is not None else None,
                   baseline_cached=cached if base is not None else None,
                   evidence_runs=runs if base is not None else ())


def _knows_collection(base: Observed | None) -> bool:
    """Whether a test missing from the base's report did not run there: only when the base's
    runner named every test it ran."""
    return base is not None and base.report is not None and base.report.complete


def _mixed(runs: Sequence[TestOutcome]) -> bool:
    seen = {_failed(outcome) for outcome in runs if outcome is not T.SKIPPED}
    return len(seen) > 1


def _failed(outcome: TestOutcome) -> bool:
    return outcome in (T.FAILED, T.ERROR)
