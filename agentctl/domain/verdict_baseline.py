"""The baseline's part of the verdict: whose failure a red check is, and whether the task's
intent was shown.

A required check that failed is the agent's failure unless the comparison with the base commit
says otherwise: a test that already failed there (FAIL_TO_FAIL) is not the patch's doing, and
a FLAKY one proves nothing either way; both leave the run for a human at most. A test that
passed on the base and fails with the patch (PASS_TO_FAIL), one the patch made flaky
(PASS_TO_FLAKY), one that vanished (PASS_TO_MISSING), a failing test the base does not have,
and any failure without a class stay the agent's.

The task's intent is stricter: a fix (bug_fix, test_fix) is shown only by a test that failed on
the base and passes with the patch, so a test still failing is the fix not shown, and a task's
must-pass tests must each pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from agentctl.domain.enums import TestClassification, TestOutcome, VerificationCheckStatus
from agentctl.domain.verdict_types import ChainLink, Intent, VerdictInputs
from agentctl.domain.verification import ClassifiedTest, VerificationCheck, VerificationReport

K = TestClassification
C = VerificationCheckStatus
MAX_NAMED = 3
MAX_REASONS = 10  # past this, one "+N more" line: every test is in `verdict explain --all`


@dataclass(frozen=True, slots=True)
class Excuse:
    """What the baseline says about the failures: the agent's (`failed`), or a human's call."""

    failed: list[str] | None
    review: list[str]


def baseline_link(inputs: VerdictInputs, chain: list[ChainLink]) -> Excuse | None:
    """None when no check was classified (no baseline ran and nothing was flaky) and the task
    asks nothing more: the verdict then reads the checks alone, as it always did."""
    report, intent = inputs.verification, inputs.intent
    classified = report is not None and any(c.classification or c.classified_tests
                                            for c in report.checks)
    if report is None or not report.checks or not (classified or intent.fix or intent.must_pass):
        return None
    base = next((c.baseline_commit for c in report.checks if c.baseline_commit), None)
    on_base = f"base {base[:12]}" if base else "the base"
    failed: list[str] = []
    preexisting: list[str] = []
    flaky: list[str] = []
    review: list[str] = []
    for check in report.checks:
        tests = check.classified_tests
        flaky += [t.test_id for t in tests if t.classification is K.FLAKY]
        if not tests and check.classification is K.FLAKY:
            flaky.append(f"`{check.command}`")
        if not check.required:
            continue
        failed += _vanished(check, on_base, intent)
        review += _expectations(check)
        if check.status in (C.PASSED, C.SKIPPED):
            continue
        failed += _agents_failures(check, on_base)
        preexisting += [t.test_id for t in tests
                        if t.classification is K.FAIL_TO_FAIL and t.base is not None]
    failed += _must_pass(report, intent)
    if preexisting:
        already = f"{_tests(len(preexisting))} already failed on {on_base} and still " \
                  f"{'fails' if len(preexisting) == 1 else 'fail'} (not blamed)"
        if not inputs.allow_preexisting_failures:
            failed.append(f"{already}: {_named(preexisting)}, and "
                          "verification.allow_preexisting_failures is false")
        else:
            review.append(f"{already}: {_named(preexisting)}")
    if intent.fix and not _fix_shown(report):
        if base is not None:
            still = f"; {_named(preexisting)} still failing" if preexisting else ""
            failed.append(f"the fix is not shown: no test fails on {on_base}'s code and passes "
                          "with the patch" + _unnamed_runners(report) + still)
        else:
            review.append("the fix is not shown: no baseline ran to compare with")
    if flaky:
        review.append(f"flaky: {_named(flaky)} changed result between runs of the same code")
    if classified:
        chain.append(ChainLink(check="baseline", passed=not failed and not flaky,
                               detail=_detail(report.checks, on_base), evidence=()))
    elif failed or review:
        chain.append(ChainLink(check="baseline", passed=False, evidence=(),
                               detail="no baseline; the task's intent is not shown"))
    return Excuse(_capped(failed) or None, _capped(review))


def _vanished(check: VerificationCheck, on_base: str, intent: Intent) -> list[str]:
    """Tests the patch made flaky or made vanish, and those whose base version fails with the
    patch's code while its own checks pass: the agent's, whatever the check's status."""
    out = [f"{t.test_id} passed on every run on {on_base}; the patch made it flaky"
           for t in check.classified_tests if t.classification is K.PASS_TO_FLAKY]
    if check.status is not C.FAILED:
        out += _folded([t for t in check.classified_tests if t.classification is K.PASS_TO_FAIL],
                       lambda t: f"{_test(t)}; it passed on {on_base}",
                       lambda n, group: f"{n} tests in {group} fail with the patch; they passed "
                                        f"on {on_base}")
    missing = [t.test_id for t in check.classified_tests
               if t.classification is K.PASS_TO_MISSING]
    if missing and not intent.allow_removed_tests:
        out.append(f"{_named(missing)} passed on {on_base} and did not run with the patch "
                   "(PASS_TO_MISSING; a task that removes tests says --allow-removed-tests)")
    return out


def _expectations(check: VerificationCheck) -> list[str]:
    """Tests whose base version fails with the patch's code while the patch's passes: possibly
    intended (an API migration), never evidence by itself."""
    changed = [t.test_id for t in check.classified_tests if t.expectations_changed]
    if not changed:
        return []
    return [f"the patch changed what {_named(changed)} "
            f"{'expects' if len(changed) == 1 else 'expect'} (the base's version fails with "
            "the patch's code)"]


def _unnamed_runners(report: VerificationReport) -> str:
    """Why a passing check of a runner that names no tests shows nothing."""
    whole = [c for c in report.checks if c.required and not c.classified_tests
             and c.classification is not None]
    if not whole:
        return ""
    return (f" (`{whole[0].command}` does not name its tests: compared as a whole, a check "
            "never shows a fix)")


def _must_pass(report: VerificationReport, intent: Intent) -> list[str]:
    """Each must-pass test that the patch's checks did not show passing, in its base version:
    one the base does not have, or whose base version fails with the patch's code, is the
    agent's word, not evidence."""
    seen: dict[str, ClassifiedTest] = {}
    failing: set[str] = set()
    for check in report.checks:
        seen.update((t.test_id, t) for t in check.classified_tests)
        failing.update(check.failing_test_ids)
    out: list[str] = []
    for test_id in intent.must_pass:
        test = seen.get(test_id)
        if test is not None and test.expectations_changed:
            out.append(f"must-pass test {test_id} passes only in the patch's version of it (its "
                       "base version fails with the patch's code)")
            continue
        if test is not None and test.base is None and not test.base_unknown:
            out.append(f"must-pass test {test_id} is not on the base: the patch's own test is "
                       "not evidence")
            continue
        if test is not None and test.classification in (K.FAIL_TO_PASS, K.PASS_TO_PASS):
            continue
        if test is not None:
            out.append(f"must-pass test {test_id} does not pass ({test.classification.value}"
                       f", {test.candidate.value} with the patch)")
        elif test_id in failing:
            out.append(f"must-pass test {test_id} does not pass")
        else:
            out.append(f"must-pass test {test_id} was not seen to pass: no check ran it")
    return out


def _fix_shown(report: VerificationReport) -> bool:
    """Only a named test shows a fix: a check compared as a whole proves nothing per test."""
    return any(t.classification is K.FAIL_TO_PASS and t.candidate is TestOutcome.PASSED
               and not t.expectations_changed
               for c in report.checks if c.required for t in c.classified_tests)


def _agents_failures(check: VerificationCheck, on_base: str) -> list[str]:
    """The failures of one failed required check that are the patch's."""
    if check.status is not C.FAILED or check.classification is None:
        return [check.summarized_failure or f"{check.name} {check.status.value}"]
    out = _folded([t for t in check.classified_tests if t.classification is K.PASS_TO_FAIL],
                  lambda t: f"{_test(t)} failed; it passed on {on_base}",
                  lambda n, group: f"{n} tests in {group} failed; they passed on {on_base}")
    out += _folded([t for t in check.classified_tests if t.classification is K.FAIL_TO_FAIL
                    and t.base is None and not t.base_unknown],
                   lambda t: f"{_test(t)} fails, and {on_base} does not have it",
                   lambda n, group: f"{n} tests in {group} fail, and {on_base} does not have "
                                    "them")
    out += [f"{_test(t)} fails; its result on {on_base} is not known (the runner did not name "
            "it)" for t in check.classified_tests
            if t.classification is K.FAIL_TO_FAIL and t.base is None and t.base_unknown]
    classified = {t.test_id for t in check.classified_tests}
    unexplained = [t for t in check.failing_test_ids if t not in classified]
    if unexplained:
        out.append(f"{_named(unexplained)} failed in `{check.command}`, with no baseline to "
                   "compare")
    if not check.classified_tests and check.classification is K.PASS_TO_FAIL:
        out.append(f"{check.summarized_failure or '`' + check.command + '` failed'}; it passed "
                   f"on {on_base}")
    if not check.classified_tests and check.classification is K.FAIL_TO_FAIL:
        out.append(f"{check.summarized_failure or '`' + check.command + '` failed'}; it failed "
                   f"on {on_base} too, but this runner does not name its tests: compared as a "
                   "whole, its failures are not known to be the same")
    return out


def _detail(checks: Sequence[VerificationCheck], on_base: str) -> str:
    counts: Counter[str] = Counter()
    for check in checks:
        if check.classified_tests:
            counts.update(t.classification.value for t in check.classified_tests)
        elif check.classification is not None:
            counts[f"{check.classification.value} (whole check)"] += 1
    cached = any(c.baseline_cached for c in checks)
    where = f"on {on_base}" + (" (cached)" if cached else "") if any(
        c.baseline_commit for c in checks) else "no baseline; reruns only"
    if any(c.evidence_runs for c in checks):  # the patch had a test side
        where += ", each side of the patch beside the other's base"
    return f"{where}: " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


def _folded(tests: Sequence[ClassifiedTest], one: Callable[[ClassifiedTest], str],
            many: Callable[[int, str], str]) -> list[str]:
    """One reason per test, except where more than MAX_NAMED tests of one file (or unittest
    class) fail the same way: those fold into one reason naming the first few, so 24 broken
    tests read as one line, not 24 near-identical ones."""
    groups: dict[str, list[ClassifiedTest]] = {}
    for test in tests:
        groups.setdefault(_group(test.test_id)[0], []).append(test)
    out: list[str] = []
    for group, members in groups.items():
        if len(members) <= MAX_NAMED or not group:
            out += [one(t) for t in members]
            continue
        first, *rest = members
        examples = [_test(replace(first, test_id=_group(first.test_id)[1]))]
        examples += [_group(t.test_id)[1] for t in rest[:MAX_NAMED - 1]]
        out.append(f"{many(len(members), group)}: e.g. {', '.join(examples)}")
    return out


def _group(test_id: str) -> tuple[str, str]:
    """A test's file (pytest's `path::name`) or class (unittest's `module.Class.name`), and
    its name within it; no group for a bare name."""
    if "::" in test_id:
        where, _, name = test_id.partition("::")
        return where, name
    where, _, name = test_id.rpartition(".")
    return where, name


def _capped(reasons: list[str]) -> list[str]:
    """The first MAX_REASONS reasons and how many more: a verdict stays readable however
    many tests broke (each test and its class stays in the verification report)."""
    if len(reasons) <= MAX_REASONS:
        return reasons
    more = len(reasons) - (MAX_REASONS - 1)
    return [*reasons[:MAX_REASONS - 1],
            f"+{more} more (every test and its class: `verdict explain --all`)"]


def _test(test: ClassifiedTest) -> str:
    return f"{test.test_id} ({test.message})" if test.message else test.test_id


def _tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"


def _named(names: Sequence[str]) -> str:
    more = f" (+{len(names) - MAX_NAMED} more)" if len(names) > MAX_NAMED else ""
    return ", ".join(names[:MAX_NAMED]) + more
