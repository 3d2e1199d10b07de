"""The baseline's part of the verdict: whose failure a red check is.

A required check that failed is the agent's failure unless the comparison with the base commit
says otherwise: a test that already failed there (FAIL_TO_FAIL) is not the patch's doing, and
a FLAKY one proves nothing either way; both leave the run for a human at most. A test that
passed on the base and fails with the patch (PASS_TO_FAIL), a failing test the base does not
have, and any failure without a class stay the agent's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentctl.domain.enums import TestClassification, VerificationCheckStatus
from agentctl.domain.verification import ClassifiedTest, VerificationCheck

if TYPE_CHECKING:
    from agentctl.domain.verdict import ChainLink, VerdictInputs

K = TestClassification
C = VerificationCheckStatus
MAX_NAMED = 3


@dataclass(frozen=True, slots=True)
class Excuse:
    """What the baseline says about the failures: the agent's (`failed`), or a human's call."""

    failed: list[str] | None
    review: list[str]


def baseline_link(inputs: VerdictInputs, chain: list[ChainLink]) -> Excuse | None:
    """None when no check was classified (no baseline ran and nothing was flaky): the verdict
    then reads the checks alone, as it always did."""
    from agentctl.domain.verdict import ChainLink

    report = inputs.verification
    if report is None or not any(c.classification or c.classified_tests for c in report.checks):
        return None
    base = next((c.baseline_commit for c in report.checks if c.baseline_commit), None)
    on_base = f"base {base[:12]}" if base else "the base"
    failed: list[str] = []
    preexisting: list[str] = []
    flaky: list[str] = []
    for check in report.checks:
        tests = check.classified_tests
        flaky += [t.test_id for t in tests if t.classification is K.FLAKY]
        if not tests and check.classification is K.FLAKY:
            flaky.append(f"`{check.command}`")
        if not check.required or check.status in (C.PASSED, C.SKIPPED):
            continue
        failed += _agents_failures(check, on_base)
        preexisting += [t.test_id for t in tests
                        if t.classification is K.FAIL_TO_FAIL and t.base is not None]
        if not tests and check.classification is K.FAIL_TO_FAIL:
            preexisting.append(f"`{check.command}`")
    review: list[str] = []
    if preexisting:
        already = f"{_tests(len(preexisting))} already failed on {on_base}"
        if not inputs.allow_preexisting_failures:
            failed.append(f"{already} ({_named(preexisting)}), and "
                          "verification.allow_preexisting_failures is false")
        else:
            review.append(f"{already}: {_named(preexisting)}")
    if flaky:
        review.append(f"flaky: {_named(flaky)} changed result between runs of the same code")
    chain.append(ChainLink(check="baseline", passed=not failed and not flaky,
                           detail=_detail(report.checks, on_base), evidence=()))
    return Excuse(failed or None, review)


def _agents_failures(check: VerificationCheck, on_base: str) -> list[str]:
    """The failures of one failed required check that are the patch's."""
    if check.status is not C.FAILED or check.classification is None:
        return [check.summarized_failure or f"{check.name} {check.status.value}"]
    out = [f"{_test(t)} failed; it passed on {on_base}" for t in check.classified_tests
           if t.classification is K.PASS_TO_FAIL]
    out += [f"{_test(t)} fails, and {on_base} does not have it" for t in check.classified_tests
            if t.classification is K.FAIL_TO_FAIL and t.base is None and not t.base_unknown]
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
    return f"{where}: " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


def _test(test: ClassifiedTest) -> str:
    return f"{test.test_id} ({test.message})" if test.message else test.test_id


def _tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"


def _named(names: Sequence[str]) -> str:
    more = f" (+{len(names) - MAX_NAMED} more)" if len(names) > MAX_NAMED else ""
    return ", ".join(names[:MAX_NAMED]) + more
