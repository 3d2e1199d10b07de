"""Judge reports, and the built-in rules judge: deterministic findings on a diff against intent."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agentctl.domain import globs
from agentctl.domain.enums import ChangeType, JudgeStatus, Severity, TaskType
from agentctl.domain.findings import DiffLine as DiffLine  # its home is `findings`
from agentctl.domain.findings import JudgeFinding as JudgeFinding  # its home is `findings`
from agentctl.domain.harness import harness_findings
from agentctl.domain.judge_intent import intent_findings
from agentctl.domain.patch import FileChange, PatchBoundaryCheck
from agentctl.domain.runner_tampering import runner_tampering_findings
from agentctl.domain.spec import JudgePolicy
from agentctl.domain.test_side import DEFAULT_TEST_PATHS, SideRule
from agentctl.domain.verification import VerificationReport

RULES_JUDGE = "rules"


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeReport:
    judge_report_id: str
    run_id: str
    attempt_id: str
    judge: str
    status: JudgeStatus
    findings: tuple[JudgeFinding, ...]
    confidence: float
    report_artifact: str | None
    created_at: datetime
    summary: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgement:
    """A judge's verdict on the diff, before it is stored as a report."""

    status: JudgeStatus
    findings: tuple[JudgeFinding, ...]
    confidence: float
    summary: str | None = None


_SKIP_MARKERS = re.compile(
    r"@pytest\.mark\.(skip|xfail)|@unittest\.skip|\bself\.skipTest\(|@Disabled\b|@Ignore\b|"
    r"\b(it|describe|test)\.skip\(|\bxit\(|\bt\.Skip\("
)
_ASSERTION = re.compile(r"\bassert|\bexpect\(|\bassertThat\b|\bshould\b")
_REDACTED = re.compile(r"\[REDACTED(:[a-z_-]+)?\]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def status_for(findings: Sequence[JudgeFinding]) -> JudgeStatus:
    severities = {finding.severity for finding in findings}
    if Severity.CRITICAL in severities:
        return JudgeStatus.FAILED
    if Severity.ERROR in severities:
        return JudgeStatus.NEEDS_HUMAN_REVIEW
    if Severity.WARNING in severities:
        return JudgeStatus.PASSED_WITH_WARNINGS
    return JudgeStatus.PASSED


def judge_by_rules(
    *,
    instruction: str,
    changes: Sequence[FileChange],
    diff_lines: Sequence[DiffLine],
    boundary: PatchBoundaryCheck,
    policy: JudgePolicy,
    verification: VerificationReport | None = None,
    task_type: TaskType | None = None,
    side: SideRule | None = None,
) -> Judgement:
    """Findings a reviewer would want first; the rules see only the redacted diff.
    `side` is the run's rule for the patch's test side, the one its evidence used (the
    default rule where a spec has none)."""
    if side is None or not side.frozen:
        side = SideRule(frozen=DEFAULT_TEST_PATHS, own=side.own if side else (),
                        through=side.through if side else ())
    findings: list[JudgeFinding] = []
    findings += _test_findings(changes, diff_lines, side)
    findings += harness_findings(changes, diff_lines)
    findings += runner_tampering_findings(diff_lines, side.paths)
    findings += _vanished_test_findings(changes, verification)
    findings += _config_findings(changes, policy)
    findings += _size_findings(changes, policy)
    findings += _special_file_findings(changes)
    findings += _secret_findings(diff_lines)
    findings += _unrelated_findings(instruction, changes, diff_lines)
    findings += intent_findings(task_type, changes, verification)  # after the file-level ones
    if not boundary.passed:
        findings.append(JudgeFinding(
            severity=Severity.CRITICAL, category="boundary",
            message="; ".join(boundary.reasons()), blocks_auto_pr=True,
        ))
    status = status_for(findings)
    summary = f"{len(findings)} finding(s)" if findings else "no findings"
    return Judgement(status=status, findings=tuple(findings), confidence=1.0, summary=summary)


def _test_findings(changes: Sequence[FileChange], lines: Sequence[DiffLine],
                   side: SideRule) -> list[JudgeFinding]:
    """Tests deleted, skipped or with fewer assertions; a test file is one by the common
    layouts or by the project's own discovery (`check_*.py` of `python_files`)."""
    out: list[JudgeFinding] = []
    tests = [c for c in changes if c.test_file or side.is_own_test_file(c.path)]
    test_paths = {c.path for c in tests}
    for change in tests:
        if change.change_type is ChangeType.DELETED:
            out.append(JudgeFinding(
                severity=Severity.ERROR, category="tests-deleted", file_path=change.path,
                message=f"test file {change.path} was deleted", blocks_auto_pr=True,
            ))
    for line in lines:
        if line.added and _SKIP_MARKERS.search(line.text):
            out.append(JudgeFinding(
                severity=Severity.WARNING, category="tests-skipped", file_path=line.path,
                line_number=line.line_number, message=f"a test is skipped: {line.text.strip()}",
                blocks_auto_pr=True,
            ))
    for path in sorted(test_paths):
        removed = sum(1 for line in lines if line.path == path and not line.added
                      and _ASSERTION.search(line.text))
        added = sum(1 for line in lines if line.path == path and line.added
                    and _ASSERTION.search(line.text))
        if removed > added:
            out.append(JudgeFinding(
                severity=Severity.WARNING, category="assertions-removed", file_path=path,
                message=f"{removed - added} assertion(s) removed from {path}", blocks_auto_pr=True,
            ))
    return out


def _vanished_test_findings(changes: Sequence[FileChange],
                            verification: VerificationReport | None) -> list[JudgeFinding]:
    """Green checks that prove nothing: a runner that found no test to run (a test file renamed
    out of its pattern: "Ran 0 tests ... OK"), or a test file moved where it may not be found."""
    out: list[JudgeFinding] = []
    for check in verification.checks if verification is not None else ():
        if check.tests_ran == 0 and check.exit_code == 0:  # a failed check is failed already
            out.append(JudgeFinding(
                severity=Severity.ERROR, category="no-tests-ran", blocks_auto_pr=True,
                message=f"`{check.command}` ran 0 tests: its success proves nothing"))
    for change in changes:
        if change.test_file and change.change_type is ChangeType.RENAMED and change.old_path:
            out.append(JudgeFinding(
                severity=Severity.ERROR, category="tests-moved", file_path=change.path,
                blocks_auto_pr=True,
                message=f"test file {change.old_path} was renamed to {change.path}; the test "
                        "runner may no longer find it"))
    return out


def _config_findings(changes: Sequence[FileChange], policy: JudgePolicy) -> list[JudgeFinding]:
    return [
        JudgeFinding(
            severity=Severity.WARNING, category="production-config", file_path=change.path,
            message=f"changed production config module {change.path}; "
                    "a reviewer should inspect its runtime behaviour",
        )
        for change in changes
        if not change.test_file
        and globs.first_match(policy.production_config_patterns, change.path)
    ]


def _size_findings(changes: Sequence[FileChange], policy: JudgePolicy) -> list[JudgeFinding]:
    size = sum(c.additions + c.deletions for c in changes)
    if size <= policy.max_diff_lines:
        return []
    return [JudgeFinding(
        severity=Severity.WARNING, category="diff-size", blocks_auto_pr=True,
        message=f"diff changes {size} lines, more than the budget of {policy.max_diff_lines}",
    )]


def _special_file_findings(changes: Sequence[FileChange]) -> list[JudgeFinding]:
    out: list[JudgeFinding] = []
    for change in changes:
        for flag, category, what in (
            (change.lockfile, "lockfile", "lockfile"),
            (change.generated, "generated", "generated file"),
            (change.binary, "binary", "binary file"),
        ):
            if flag:
                out.append(JudgeFinding(
                    severity=Severity.WARNING if change.binary else Severity.INFO,
                    category=category, file_path=change.path,
                    message=f"{what} {change.path} changed",
                ))
    return out


def _secret_findings(lines: Sequence[DiffLine]) -> list[JudgeFinding]:
    return [
        JudgeFinding(
            severity=Severity.CRITICAL, category="secret", file_path=line.path,
            line_number=line.line_number, blocks_auto_pr=True,
            message=f"the patch adds what looks like a secret in {line.path}",
        )
        for line in lines
        if line.added and _REDACTED.search(line.text)
    ]


def _unrelated_findings(
    instruction: str, changes: Sequence[FileChange], lines: Sequence[DiffLine],
) -> list[JudgeFinding]:
    """Files whose diff names nothing the instruction names; only when it names something."""
    named = {
        token.lower() for token in _IDENTIFIER.findall(instruction)
        if len(token) >= 4 and ("_" in token or "." in token or token[1:] != token[1:].lower())
    }
    if not named:
        return []
    out: list[JudgeFinding] = []
    for change in changes:
        if change.test_file:
            continue
        text = " ".join(line.text for line in lines if line.path == change.path).lower() + change.path.lower()
        parts = {piece for token in named for piece in token.split(".") if len(piece) >= 4}
        if not any(piece in text for piece in parts):
            out.append(JudgeFinding(
                severity=Severity.INFO, category="unrelated-file", file_path=change.path,
                message=f"{change.path} changes nothing the instruction names",
            ))
    return out


_SEVERITY_OF_STATUS = {
    JudgeStatus.PASSED: 0, JudgeStatus.PASSED_WITH_WARNINGS: 1,
    JudgeStatus.NEEDS_HUMAN_REVIEW: 2, JudgeStatus.INCONCLUSIVE: 3, JudgeStatus.FAILED: 4,
}


def combine(first: Judgement, second: Judgement) -> Judgement:
    """Two judges on one diff: every finding counts, the sterner status and the lower
    confidence win, so adding a judge can only make a run more careful."""
    status = max(first.status, second.status, key=lambda s: _SEVERITY_OF_STATUS.get(s, 3))
    summaries = [s for s in (first.summary, second.summary) if s]
    return Judgement(status=status, findings=first.findings + second.findings,
                     confidence=min(first.confidence, second.confidence),
                     summary="; ".join(summaries) or None)
