"""Verification: the plan's commands and what they proved; infra failure is not code failure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentctl.domain.ansi import strip_ansi
from agentctl.domain.enums import (
    TestClassification,
    TestOutcome,
    VerificationCheckStatus,
    VerificationStatus,
)
from agentctl.domain.serialize import LATER, LATER_UNMARKED

C = VerificationCheckStatus

# Exit codes that say the environment failed rather than the code: command not found or not
# executable, and death by a signal sent from outside (the OOM killer's SIGKILL, SIGTERM, SIGHUP,
# SIGINT). A crash the code caused itself (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) is a code
# failure. Shells report death by signal N as 128+N, Python's subprocess as -N.
INFRA_EXIT_CODES = frozenset({126, 127})
INFRA_SIGNALS = frozenset({1, 2, 9, 15})

DEFAULT_INFRA_PATTERNS = (
    r"Could not resolve host",
    r"Could not resolve",
    r"Temporary failure in name resolution",
    r"Name or service not known",
    r"Connection refused",
    r"Connection timed out",
    r"Connection reset by peer",
    r"Network is unreachable",
    r"repository timeout",
    r"Read timed out",
    r"No space left on device",
    r"Cannot allocate memory",
    r"Could not transfer artifact",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TestCounts:
    """How many tests of a check passed, failed, were skipped or erred (`tests` in JSON)."""

    __test__ = False
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped + self.errors


@dataclass(frozen=True, slots=True, kw_only=True)
class TestResult:
    """One test in one run: its id as its runner reruns it (a pytest node id, a unittest id,
    `Class.method` from JUnit XML), its outcome, and the first line of its failure."""

    __test__ = False
    test_id: str
    outcome: TestOutcome
    message: str | None = None
    duration_seconds: float | None = None  # None where its runner did not say

    @property
    def failed(self) -> bool:
        return self.outcome in (TestOutcome.FAILED, TestOutcome.ERROR)


@dataclass(frozen=True, slots=True, kw_only=True)
class TestReport:
    """Per-test results of one check, as parsed from what its runner wrote (the TEST_REPORT)."""

    __test__ = False
    runner: str  # pytest, unittest, junit, go
    results: tuple[TestResult, ...]
    unnamed_passed: int = 0  # counted by the runner but not named (unittest without -v)
    unnamed_skipped: int = 0

    @property
    def counts(self) -> TestCounts:
        outcomes = [r.outcome for r in self.results]
        return TestCounts(passed=outcomes.count(TestOutcome.PASSED) + self.unnamed_passed,
                          failed=outcomes.count(TestOutcome.FAILED),
                          skipped=outcomes.count(TestOutcome.SKIPPED) + self.unnamed_skipped,
                          errors=outcomes.count(TestOutcome.ERROR))

    @property
    def complete(self) -> bool:
        """Whether every test is named, so a test missing here did not run."""
        return not (self.unnamed_passed or self.unnamed_skipped)

    def outcome_of(self, test_id: str) -> TestOutcome | None:
        return next((r.outcome for r in self.results if r.test_id == test_id), None)

    @property
    def failing(self) -> tuple[TestResult, ...]:
        return tuple(r for r in self.results if r.failed)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassifiedTest:
    """A test of the patch compared with the base commit. `base` is None for a test the base
    does not have, or, with `base_unknown`, one whose base result its runner did not name (the
    base run counted tests it did not name, so absence proves nothing)."""

    __test__ = False
    test_id: str
    classification: TestClassification
    candidate: TestOutcome
    base: TestOutcome | None
    message: str | None = None
    base_unknown: bool = field(default=False, metadata=LATER_UNMARKED)
    # the base's version of the test fails with the patch's code while the patch's version
    # passes: the patch changed what it expects (for review, never evidence by itself)
    expectations_changed: bool = field(default=False, metadata=LATER)


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationCheck:
    name: str
    command: str
    status: VerificationCheckStatus
    exit_code: int | None
    duration_seconds: float
    log_artifact: str | None
    summarized_failure: str | None
    required: bool
    test_report_artifact: str | None = None
    failing_tests: tuple[str, ...] = ()
    tests_ran: int | None = None  # as the runner reported it; None when it named no count
    tests: TestCounts | None = None  # per-test results, where the runner's report was read
    failing_test_ids: tuple[str, ...] = ()
    # With a baseline on the base commit: the whole check's class, and each test's.
    classification: TestClassification | None = None
    classified_tests: tuple[ClassifiedTest, ...] = ()
    baseline_commit: str | None = None
    baseline_cached: bool | None = None
    # whose per-test results `tests` counts: pytest, unittest, junit...
    runner: str | None = field(default=None, metadata=LATER_UNMARKED)
    # the runs beside the base that the patch's sides allowed: "fix evidence" (the base's code
    # under the patch's tests), "regression evidence" (the patch's code under the base's tests)
    evidence_runs: tuple[str, ...] = field(default=(), metadata=LATER)


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationReport:
    verification_report_id: str
    run_id: str
    attempt_id: str
    status: VerificationStatus
    checks: tuple[VerificationCheck, ...]
    full_report_artifact: str | None
    started_at: datetime
    ended_at: datetime

    def failure_reasons(self) -> list[str]:
        return [strip_ansi(c.summarized_failure or f"{c.name} {c.status.value}")
                for c in self.checks
                if c.status not in (C.PASSED, C.SKIPPED)]


def classify_exit(
    exit_code: int | None, *, timed_out: bool, log_tail: str, infra_patterns: Sequence[str],
    failing_tests: Sequence[str] = (),
) -> tuple[VerificationCheckStatus, str | None]:
    """A finished command's status and, for infra failures, the evidence that made it one.

    Named failing tests win over log patterns: a test whose message mentions "Connection
    refused" failed on its own terms and is not retried as infrastructure.
    """
    if timed_out:
        return C.TIMED_OUT, None
    if exit_code == 0:
        return C.PASSED, None
    if exit_code is None or exit_code in INFRA_EXIT_CODES or _signal(exit_code) in INFRA_SIGNALS:
        return C.INFRA_FAILURE, _exit_reason(exit_code)
    if failing_tests:
        return C.FAILED, None
    for pattern in infra_patterns:
        match = re.search(pattern, log_tail, re.IGNORECASE)
        if match:
            return C.INFRA_FAILURE, _line_of(log_tail, match.start())
    return C.FAILED, None


def _signal(exit_code: int) -> int | None:
    if exit_code < 0:
        return -exit_code
    if 128 < exit_code < 160:
        return exit_code - 128
    return None


def _exit_reason(exit_code: int | None) -> str:
    if exit_code is None:
        return "the command could not be started"
    if exit_code in (126, 127):
        return f"command not found or not executable (exit {exit_code})"
    return f"killed by signal {_signal(exit_code)}"


def _line_of(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end != -1 else len(text)].strip()


def overall_status(checks: Sequence[VerificationCheck]) -> VerificationStatus:
    """Required checks decide; a failing optional check makes an otherwise passing run PARTIAL."""
    if not checks:
        return VerificationStatus.NOT_RUN
    required = [c for c in checks if c.required]
    for status, overall in (
        (C.INFRA_FAILURE, VerificationStatus.INFRA_FAILURE),
        (C.FAILED, VerificationStatus.FAILED),
        (C.TIMED_OUT, VerificationStatus.TIMED_OUT),
    ):
        if any(c.status is status for c in required):
            return overall
    if all(c.status in (C.PASSED, C.SKIPPED) for c in checks):
        if all(c.status is C.SKIPPED for c in checks):
            return VerificationStatus.SKIPPED_BY_POLICY
        return VerificationStatus.PASSED
    return VerificationStatus.PARTIAL
