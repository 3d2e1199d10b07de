"""Rows of the evidence a run is judged by and of what is decided on it: patches, verification
and judge reports, verdicts, approvals and pull requests."""

from __future__ import annotations

from agentctl.domain.enums import (
    ApprovalDecision,
    Forge,
    JudgeStatus,
    PatchApplyStatus,
    PrEligibility,
    PrState,
    VerdictStatus,
    VerificationStatus,
)
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.store import json_columns as nested
from agentctl.store.rows import Row, RowMapping, RowValues, at, dump, iso, load


def patch_to_row(r: Patch) -> RowValues:
    return {
        "patch_id": r.patch_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "base_commit": r.base_commit,
        "unified_diff_artifact": r.unified_diff_artifact,
        "file_changes": dump(r.file_changes),
        "stats": dump(r.stats),
        "boundary_check": dump(r.boundary_check),
        "apply_status": r.apply_status.value,
        "created_at": iso(r.created_at),
        "apply_error": r.apply_error,
        "tree_id": r.tree_id,
    }


def patch_from_row(row: Row) -> Patch:
    return Patch(
        patch_id=row["patch_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        base_commit=row["base_commit"],
        unified_diff_artifact=row["unified_diff_artifact"],
        file_changes=tuple(nested.file_change(x) for x in load(row["file_changes"])),
        stats=nested.patch_stats(load(row["stats"])),
        boundary_check=nested.patch_boundary_check(load(row["boundary_check"])),
        apply_status=PatchApplyStatus(row["apply_status"]),
        created_at=at(row["created_at"]),
        apply_error=row["apply_error"],
        tree_id=row["tree_id"],
    )


def verification_report_to_row(r: VerificationReport) -> RowValues:
    return {
        "verification_report_id": r.verification_report_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "status": r.status.value,
        "checks": dump(r.checks),
        "full_report_artifact": r.full_report_artifact,
        "started_at": iso(r.started_at),
        "ended_at": iso(r.ended_at),
    }


def verification_report_from_row(row: Row) -> VerificationReport:
    return VerificationReport(
        verification_report_id=row["verification_report_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        status=VerificationStatus(row["status"]),
        checks=tuple(nested.verification_check(x) for x in load(row["checks"])),
        full_report_artifact=row["full_report_artifact"],
        started_at=at(row["started_at"]),
        ended_at=at(row["ended_at"]),
    )


def judge_report_to_row(r: JudgeReport) -> RowValues:
    return {
        "judge_report_id": r.judge_report_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "judge": r.judge,
        "status": r.status.value,
        "findings": dump(r.findings),
        "confidence": r.confidence,
        "report_artifact": r.report_artifact,
        "created_at": iso(r.created_at),
        "summary": r.summary,
    }


def judge_report_from_row(row: Row) -> JudgeReport:
    return JudgeReport(
        judge_report_id=row["judge_report_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        judge=row["judge"],
        status=JudgeStatus(row["status"]),
        findings=tuple(nested.judge_finding(x) for x in load(row["findings"])),
        confidence=float(row["confidence"]),
        report_artifact=row["report_artifact"],
        created_at=at(row["created_at"]),
        summary=row["summary"],
    )


def verdict_to_row(r: Verdict) -> RowValues:
    return {
        "verdict_id": r.verdict_id,
        "run_id": r.run_id,
        "status": r.status.value,
        "pr_eligibility": r.pr_eligibility.value,
        "reasons": dump(r.reasons),
        "evidence": dump(r.evidence),
        "chain": dump(r.chain),
        "decided_at": iso(r.decided_at),
        "decided_by": r.decided_by,
        "spec_digest": r.spec_digest,
        "tree_id": r.tree_id,
    }


def verdict_from_row(row: Row) -> Verdict:
    return Verdict(
        verdict_id=row["verdict_id"],
        run_id=row["run_id"],
        status=VerdictStatus(row["status"]),
        pr_eligibility=PrEligibility(row["pr_eligibility"]),
        reasons=tuple(load(row["reasons"])),
        evidence=tuple(load(row["evidence"])),
        chain=tuple(nested.chain_link(x) for x in load(row["chain"])),
        decided_at=at(row["decided_at"]),
        decided_by=row["decided_by"],
        spec_digest=row["spec_digest"],
        tree_id=row["tree_id"],
    )


def approval_to_row(r: Approval) -> RowValues:
    return {
        "approval_id": r.approval_id,
        "run_id": r.run_id,
        "verdict_id": r.verdict_id,
        "decision": r.decision.value,
        "by": r.by,
        "reason": r.reason,
        "created_at": iso(r.created_at),
    }


def approval_from_row(row: Row) -> Approval:
    return Approval(
        approval_id=row["approval_id"],
        run_id=row["run_id"],
        verdict_id=row["verdict_id"],
        decision=ApprovalDecision(row["decision"]),
        by=row["by"],
        reason=row["reason"],
        created_at=at(row["created_at"]),
    )


def pull_request_to_row(r: PullRequest) -> RowValues:
    return {
        "pr_id": r.pr_id,
        "run_id": r.run_id,
        "repository": r.repository,
        "branch": r.branch,
        "commit_sha": r.commit_sha,
        "base_commit": r.base_commit,
        "remote": r.remote,
        "draft": r.draft,
        "body_artifact": r.body_artifact,
        "url": r.url,
        "created_by": r.created_by,
        "created_at": iso(r.created_at),
        "forge": r.forge.value,
        "number": r.number,
        "base": r.base,
        "state": r.state.value,
    }


def pull_request_from_row(row: Row) -> PullRequest:
    return PullRequest(
        pr_id=row["pr_id"],
        run_id=row["run_id"],
        repository=row["repository"],
        branch=row["branch"],
        commit_sha=row["commit_sha"],
        base_commit=row["base_commit"],
        remote=row["remote"],
        draft=bool(row["draft"]),
        body_artifact=row["body_artifact"],
        url=row["url"],
        created_by=row["created_by"],
        created_at=at(row["created_at"]),
        forge=Forge(row["forge"]),
        number=row["number"],
        base=row["base"],
        state=PrState(row["state"]),
    )


PATCHES = RowMapping("patch", "patch_id", "patch", patch_to_row, patch_from_row)
VERIFICATIONS = RowMapping("verification_report", "verification_report_id", "verification",
                           verification_report_to_row, verification_report_from_row)
JUDGEMENTS = RowMapping("judge_report", "judge_report_id", "judge", judge_report_to_row,
                        judge_report_from_row)
VERDICTS = RowMapping("verdict", "verdict_id", "verdict", verdict_to_row, verdict_from_row)
APPROVALS = RowMapping("approval", "approval_id", "approval", approval_to_row, approval_from_row)
PULL_REQUESTS = RowMapping("pull_request", "pr_id", "pr", pull_request_to_row,
                           pull_request_from_row)
