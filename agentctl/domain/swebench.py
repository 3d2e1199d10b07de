"""A run as SWE-bench's `report.json`: the same keys, so its tooling reads agentctl's evidence.

SWE-bench's expected test lists come from a gold patch; agentctl has the base commit instead,
so each bucket holds the tests of that class (per test where the runner reported tests, else
the check's command), under `success` when the test passes with the patch and `failure` when it
fails. FLAKY tests fit no bucket: they are left out, and a run with one is not `resolved`.
`resolved`: the patch applied, some test shows the fix (FAIL_TO_PASS), and nothing the patch
broke (no PASS_TO_PASS failure, no PASS_TO_FAIL, no failing test the base lacks, nothing flaky).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentctl.domain.enums import PatchApplyStatus, TestClassification, TestOutcome
from agentctl.domain.patch import Patch
from agentctl.domain.verification import VerificationReport

K = TestClassification
BUCKETS = (K.FAIL_TO_PASS, K.PASS_TO_PASS, K.FAIL_TO_FAIL, K.PASS_TO_FAIL)


@dataclass(frozen=True, slots=True)
class Classified:
    test_id: str
    classification: TestClassification
    passed: bool  # with the patch
    new: bool = False  # the base does not have it


def classified_tests(report: VerificationReport | None) -> list[Classified]:
    """Every classified test of the run, and each check classed whole where it has none."""
    out: list[Classified] = []
    for check in report.checks if report is not None else ():
        if check.classified_tests:
            out += [Classified(t.test_id, t.classification,
                               passed=t.candidate in (TestOutcome.PASSED, TestOutcome.SKIPPED),
                               new=t.base is None and not t.base_unknown)
                    for t in check.classified_tests]
        elif check.classification is not None:
            out.append(Classified(check.command, check.classification,
                                  passed=check.status.value == "PASSED"))
    return out


def swebench_report(instance_id: str, patch: Patch | None,
                    verification: VerificationReport | None) -> dict[str, object]:
    tests = classified_tests(verification)
    status = {kind.value: {"success": [t.test_id for t in tests
                                       if t.classification is kind and t.passed],
                           "failure": [t.test_id for t in tests
                                       if t.classification is kind and not t.passed]}
              for kind in BUCKETS}
    exists = patch is not None and patch.stats.files_changed > 0
    applied = patch is not None and patch.apply_status is PatchApplyStatus.APPLIES_CLEANLY
    kinds = {t.classification for t in tests}
    broke = any(t.classification is K.PASS_TO_FAIL or (t.new and not t.passed) for t in tests)
    resolved = (applied and exists and K.FAIL_TO_PASS in kinds and not broke
                and K.FLAKY not in kinds)
    return {instance_id: {
        "patch_is_None": patch is None,
        "patch_exists": exists,
        "patch_successfully_applied": applied,
        "resolved": resolved,
        "tests_status": status,
    }}
