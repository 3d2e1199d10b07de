"""The verdict: one pure decision over the run's evidence, and the approvals that may follow it.

The order of the checks is the contract (DESIGN.md §2 step 9): a deterministic failure can never
be overridden by a later, softer link, and eligibility never exceeds what the checks allow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from agentctl.domain.enums import (
    ApprovalDecision,
    AutonomyLevel,
    JudgeStatus,
    PatchApplyStatus,
    PrEligibility,
    Severity,
    VerdictStatus,
    VerificationStatus,
)
from agentctl.domain.errors import InvariantViolation
from agentctl.domain.judge import JudgeReport
from agentctl.domain.verdict_baseline import baseline_link
from agentctl.domain.verdict_types import ChainLink as ChainLink
from agentctl.domain.verdict_types import Evidence as Evidence
from agentctl.domain.verdict_types import VerdictInputs as VerdictInputs
from agentctl.domain.verification import VerificationCheck

V = VerdictStatus
E = PrEligibility
# Verdicts whose patch may go on towards a PR (with review or approval as eligibility says).
SUCCESSFUL = frozenset({V.SUCCESS, V.SUCCESS_NEEDS_REVIEW})
NO_VERIFICATION = "no verification command configured"


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    verdict_id: str
    run_id: str
    status: VerdictStatus
    pr_eligibility: PrEligibility
    reasons: tuple[str, ...]
    evidence: tuple[str, ...]
    chain: tuple[ChainLink, ...]
    decided_at: datetime
    decided_by: str
    spec_digest: str
    tree_id: str | None = None  # the tree that was verified: what `pr create` must commit

    def __post_init__(self) -> None:
        if not self.reasons:
            raise InvariantViolation("a verdict must list its reasons")


@dataclass(frozen=True, slots=True, kw_only=True)
class Approval:
    approval_id: str
    run_id: str
    verdict_id: str
    decision: ApprovalDecision
    by: str
    reason: str
    created_at: datetime

    def __post_init__(self) -> None:
        if not self.by.strip() or not self.reason.strip():
            raise InvariantViolation("an approval must say who decided and why")


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    status: VerdictStatus
    pr_eligibility: PrEligibility
    reasons: tuple[str, ...]
    evidence: tuple[str, ...]
    chain: tuple[ChainLink, ...]
    tree_id: str | None = None  # the patch's tree, verified on a fresh checkout of its base

    def redacted(self, clean: Callable[[str], str]) -> Decision:
        """Reasons and details as stored: they quote paths, commands and errors an agent chose."""
        return replace(self, reasons=tuple(clean(reason) for reason in self.reasons),
                       chain=tuple(replace(link, detail=clean(link.detail))
                                   for link in self.chain))


def unattributed_detail(paths: Sequence[str], shown: int = 5) -> str:
    """The files the patch changes that no recorded call changed: written while no call ran
    (a background job of an earlier call, a process no call owns) or after the last one."""
    more = f" (+{len(paths) - shown} more in touched-files.json)" if len(paths) > shown else ""
    return "changed by no recorded call: " + ", ".join(paths[:shown]) + more


def cancelled(reason: str, autonomy: AutonomyLevel) -> Decision:
    """The verdict of a run a person stopped: it gathered no evidence worth judging."""
    return decide_verdict(VerdictInputs(autonomy=autonomy, evidence=Evidence(), cancelled=reason))


def infrastructure_failed(reason: str, autonomy: AutonomyLevel,
                          evidence: Evidence | None = None) -> Decision:
    """The verdict of a run whose environment failed before the patch could be judged."""
    return decide_verdict(VerdictInputs(autonomy=autonomy, evidence=evidence or Evidence(),
                                        infrastructure_failure=reason))


def decide_verdict(inputs: VerdictInputs) -> Decision:
    chain: list[ChainLink] = []
    status, reasons = _decide_status(inputs, chain)
    eligibility, why = _eligibility(status, inputs.autonomy)
    if inputs.unattributed:
        chain.append(ChainLink(check="attribution", passed=False, evidence=inputs.evidence.patch,
                               detail=unattributed_detail(inputs.unattributed)))
    chain.append(ChainLink(check="autonomy", passed=True, detail=f"autonomy level {inputs.autonomy.value}"))
    if inputs.sandbox_off is not None:
        eligibility, why = unsandboxed_cap(eligibility, why)
        chain.append(ChainLink(check="sandbox", passed=False, detail=inputs.sandbox_off))
        reasons.append(inputs.sandbox_off)
    chain.append(ChainLink(check="eligibility", passed=eligibility is not E.NOT_ELIGIBLE, detail=why))
    if status in SUCCESSFUL:
        reasons.append(why)
    evidence = tuple(dict.fromkeys(a for link in chain for a in link.evidence))
    return Decision(
        status=status, pr_eligibility=eligibility, reasons=tuple(reasons), evidence=evidence,
        chain=tuple(chain), tree_id=inputs.patch.tree_id if inputs.patch else None,
    )


def _decide_status(inputs: VerdictInputs, chain: list[ChainLink]) -> tuple[VerdictStatus, list[str]]:
    """Every link with evidence goes on the chain (explain shows the tests passed even when the
    boundary failed); the status comes from the first failing link in precedence order."""
    ev = inputs.evidence
    if inputs.cancelled is not None:
        chain.append(ChainLink(check="cancellation", passed=False, detail=inputs.cancelled))
        return V.CANCELLED, [inputs.cancelled]
    patch = inputs.patch
    if patch is not None:
        boundary = patch.boundary_check
        chain.append(ChainLink(
            check="boundary", passed=boundary.passed, evidence=ev.patch,
            detail="; ".join(boundary.reasons()) or
            f"{patch.stats.files_changed} file(s) changed, all inside the boundary"))
        applies = patch.apply_status is PatchApplyStatus.APPLIES_CLEANLY
        chain.append(ChainLink(
            check="apply", passed=applies, evidence=ev.patch,
            detail=f"the collected patch applies cleanly to {patch.base_commit[:12]}, giving "
            "the workspace's tree" if applies else f"the collected patch does not apply to "
            f"{patch.base_commit[:12]}: {patch.apply_error or 'git apply failed'}",
        ))
    infrastructure = inputs.infrastructure_failure if inputs.verification is None else None
    if infrastructure is not None:
        chain.append(ChainLink(check="infrastructure", passed=False, detail=infrastructure,
                               evidence=ev.failure))
    elif inputs.agent_error is not None or patch is None:
        detail = inputs.agent_error or "the agent changed nothing"
        chain.append(ChainLink(check="agent", passed=False, detail=detail, evidence=ev.failure))
    evaluated = patch is not None and inputs.agent_error is None and infrastructure is None
    verification_verdict = _verification_link(inputs, chain) if evaluated else None
    excused = baseline_link(inputs, chain) if evaluated else None
    review = _judge_link(inputs, chain) if evaluated else []

    if patch is not None and not patch.boundary_check.passed:
        return V.FAILED_POLICY, patch.boundary_check.reasons()
    if infrastructure is not None:
        return V.FAILED_INFRASTRUCTURE, [infrastructure]
    if inputs.agent_error is not None:
        return V.FAILED_AGENT_COULD_NOT_COMPLETE, [inputs.agent_error]
    if patch is None:
        return V.FAILED_AGENT_COULD_NOT_COMPLETE, ["the agent produced no patch"]
    if patch.apply_status is not PatchApplyStatus.APPLIES_CLEANLY:
        return V.INCONCLUSIVE, [f"patch does not apply cleanly to base commit "
                                f"{patch.base_commit[:12]}"]
    if verification_verdict is not None and verification_verdict[0] is not V.FAILED_VERIFICATION:
        return verification_verdict  # the machine failed: the baseline cannot say whose fault
    if excused is not None and excused.failed is not None:
        return V.FAILED_VERIFICATION, excused.failed
    if verification_verdict is not None and (excused is None or not excused.review):
        return verification_verdict
    condemned = _condemned(inputs.judge)
    if condemned:
        return V.INCONCLUSIVE, condemned
    verification = inputs.verification
    if excused is not None and excused.review:
        review[:0] = excused.review
    elif verification is None or not verification.checks:
        review.append(NO_VERIFICATION)
    elif verification.status is not VerificationStatus.PASSED:
        state = verification.status.value
        review.append(f"verification {state}: not every deterministic check passed")
    if review:
        return V.SUCCESS_NEEDS_REVIEW, review
    return V.SUCCESS, ["boundary passed, every check passed, the judge is confident"]


def _verification_link(
    inputs: VerdictInputs, chain: list[ChainLink],
) -> tuple[VerdictStatus, list[str]] | None:
    report = inputs.verification
    if report is None or not report.checks:
        chain.append(ChainLink(check="verification", passed=False, detail=NO_VERIFICATION))
        return None
    if report.status in (VerificationStatus.NOT_RUN, VerificationStatus.SKIPPED_BY_POLICY):
        chain.append(ChainLink(check="verification", passed=False,
                               detail="no verification command ran"))
        return None
    failures = report.failure_reasons()
    detail = "; ".join(failures) or "; ".join(_counted(check) for check in report.checks)
    passed = report.status is VerificationStatus.PASSED
    chain.append(ChainLink(check="verification", passed=passed, detail=detail,
                           evidence=inputs.evidence.verification))
    if report.status is VerificationStatus.INFRA_FAILURE:
        return V.FAILED_INFRASTRUCTURE, failures
    if report.status in (VerificationStatus.FAILED, VerificationStatus.TIMED_OUT):
        return V.FAILED_VERIFICATION, failures
    return None


def _counted(check: VerificationCheck) -> str:
    """`69 passed, 0 failed, 2 skipped (unittest)`: what a passing check proved."""
    counts = check.tests
    if counts is None:
        return f"`{check.command}` {check.status.value.lower()}"
    runner = f" ({check.runner})" if check.runner else ""
    return (f"{counts.passed} passed, {counts.failed + counts.errors} failed, "
            f"{counts.skipped} skipped{runner}")


def _judge_link(inputs: VerdictInputs, chain: list[ChainLink]) -> list[str]:
    """Reasons the judge gives for a human to look; empty when it is content."""
    judge, policy = inputs.judge, inputs.judge_policy
    if judge is None or policy is None or judge.status is JudgeStatus.NOT_RUN:
        chain.append(ChainLink(check="judge", passed=False, detail="the judge did not run"))
        return ["the judge did not run"]
    reasons: list[str] = []
    warnings = _first_and_count([f.message for f in judge.findings if f.severity.value != "INFO"])
    if judge.status in (JudgeStatus.FAILED, JudgeStatus.NEEDS_HUMAN_REVIEW, JudgeStatus.INCONCLUSIVE):
        reasons.append(f"judge {judge.status.value}: " + (warnings or judge.summary or ""))
    elif judge.status is JudgeStatus.PASSED_WITH_WARNINGS and policy.strict:
        reasons.append("judge warned under a strict judge policy: " + warnings)
    elif any(f.blocks_auto_pr for f in judge.findings):
        reasons.append("a judge finding blocks auto-PR: " + warnings)
    if judge.confidence < policy.min_confidence:
        reasons.append(
            f"judge confidence {judge.confidence:.2f} is below the threshold {policy.min_confidence:.2f}"
        )
    detail = "; ".join(reasons) or f"judge {judge.status.value} (confidence {judge.confidence:.2f})"
    chain.append(ChainLink(check="judge", passed=not reasons, detail=detail,
                           evidence=inputs.evidence.judge))
    return reasons


def _condemned(judge: JudgeReport | None) -> list[str]:
    """A judge that says FAILED, or any CRITICAL finding, outweighs passing checks: the run is
    never eligible, whoever approves (a person may still read it and start another)."""
    if judge is None:
        return []
    critical = [f.message for f in judge.findings if f.severity is Severity.CRITICAL]
    if judge.status is not JudgeStatus.FAILED and not critical:
        return []
    return [f"the judge said {judge.status.value}"
            + (f" with a CRITICAL finding: {_first_and_count(critical)}" if critical
               else f": {judge.summary or 'no summary'}") + "; never eligible for a PR"]


def _first_and_count(messages: Sequence[str]) -> str:
    """The first finding and how many more: a reason is a line, the report has the rest."""
    if not messages:
        return ""
    more = f" (+{len(messages) - 1} more in judge-report.json)" if len(messages) > 1 else ""
    return messages[0] + more


def _eligibility(status: VerdictStatus, autonomy: AutonomyLevel) -> tuple[PrEligibility, str]:
    if status not in SUCCESSFUL:
        return E.NOT_ELIGIBLE, f"{status.value} is never eligible for a PR"
    if autonomy is AutonomyLevel.DRY_RUN:
        return E.NOT_ELIGIBLE, "autonomy dry_run never opens a PR"
    if autonomy is AutonomyLevel.DRAFT_PR:
        return E.DRAFT_ONLY, "autonomy draft_pr allows a draft PR at most"
    if autonomy is AutonomyLevel.SUPERVISED_PR or status is V.SUCCESS_NEEDS_REVIEW:
        return E.ELIGIBLE_AFTER_HUMAN_APPROVAL, "a PR may be opened after a human approves"
    return E.ELIGIBLE_FOR_AUTO_PR, "every check passed and the judge is confident: auto-PR allowed"


def unsandboxed_cap(eligibility: PrEligibility, why: str) -> tuple[PrEligibility, str]:
    """A run whose processes ran outside the sandbox is at best ELIGIBLE_AFTER_HUMAN_APPROVAL:
    nothing confined what they did beyond the workspace."""
    if eligibility is E.ELIGIBLE_FOR_AUTO_PR:
        return E.ELIGIBLE_AFTER_HUMAN_APPROVAL, "unsandboxed: a PR may be opened after a human approves"
    return eligibility, why


def may_open_pr(eligibility: PrEligibility, approvals: Sequence[Approval]) -> tuple[bool, str]:
    """Whether `pr create` may proceed, given the verdict's eligibility and the approvals since."""
    latest = approvals[-1] if approvals else None
    if eligibility is E.NOT_ELIGIBLE:
        return False, "the verdict is NOT_ELIGIBLE for a PR"
    if latest is not None and latest.decision is ApprovalDecision.REJECTED:
        return False, f"rejected by {latest.by}: {latest.reason}"
    if eligibility is E.ELIGIBLE_AFTER_HUMAN_APPROVAL and latest is None:
        return False, "the verdict needs a human approval first (agentctl verdict approve)"
    return True, "eligible"


def approvals_link(approvals: Sequence[Approval]) -> ChainLink:
    """The last link of the decision chain: who approved or rejected the verdict since."""
    latest = approvals[-1] if approvals else None
    return ChainLink(
        check="approvals",
        passed=latest is not None and latest.decision is ApprovalDecision.APPROVED,
        detail="; ".join(f"{a.decision.value} by {a.by}: {a.reason}" for a in approvals)
        or "no approval recorded",
    )


EXIT_SUCCESS = 0
EXIT_UNSUCCESSFUL = 1


def exit_code_for(status: VerdictStatus | None) -> int:
    """What `run start` exits with: 0 for a run whose patch may go on (DESIGN.md §4), else 1."""
    return EXIT_SUCCESS if status in SUCCESSFUL else EXIT_UNSUCCESSFUL
