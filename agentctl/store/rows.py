"""Rows to records and back: one explicit pair of functions per record, as procrastinate does.

Column names are the records' field names; enum columns hold their value, time columns ISO text,
nested values compact JSON text (camelCase keys, as the JSON the CLI shows). `*_to_row` gives
the record's own columns (a column it lacks, like `attempt.fenced_writes`, keeps its default or
stored value); `*_from_row` takes any row that can be indexed by column name (sqlite3.Row, a
SQLAlchemy RowMapping, a dict). No SQLAlchemy import: the lean read path uses these too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from agentctl.domain.artifact import Artifact
from agentctl.domain.clock import to_iso
from agentctl.domain.enums import (
    ApprovalDecision,
    ArtifactType,
    ArtifactVisibility,
    AttemptStatus,
    AutonomyLevel,
    EventType,
    JudgeStatus,
    MessageRole,
    PatchApplyStatus,
    PrEligibility,
    RedactionStatus,
    RunStatus,
    SessionStatus,
    StepStatus,
    StepType,
    TaskSource,
    TaskStatus,
    TaskType,
    ToolDecision,
    VerdictStatus,
    VerificationStatus,
)
from agentctl.domain.events import Event
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Attempt, Run
from agentctl.domain.serialize import to_json
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.store import json_columns as nested

R = TypeVar("R")
RowValues = dict[str, str | int | float | bool | None]
"""A record's columns as the driver takes them."""


class Row(Protocol):
    """A stored row, indexed by column name; values are the driver's (str, int, float, None)."""

    def __getitem__(self, key: str, /) -> Any: ...


def _iso(moment: datetime) -> str:
    return to_iso(moment) or ""


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _dump(value: object) -> str:
    """Nested values as compact JSON text; empty ones as `{}`/`[]` without the encoder."""
    if not value and isinstance(value, (dict, tuple, list)):
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(to_json(value), separators=(",", ":"), ensure_ascii=False)


def _load(text: str) -> Any:
    return json.loads(text)


def task_to_row(r: Task) -> RowValues:
    return {
        "task_id": r.task_id,
        "source": r.source.value,
        "created_by": r.created_by,
        "task_type": r.task_type.value,
        "title": r.title,
        "instruction": r.instruction,
        "repository": r.repository,
        "base_ref": r.base_ref,
        "autonomy_level": r.autonomy_level.value,
        "status": r.status.value,
        "created_at": _iso(r.created_at),
        "updated_at": _iso(r.updated_at),
        "labels": _dump(r.labels),
        "allowed_paths": _dump(r.allowed_paths),
        "forbidden_paths": _dump(r.forbidden_paths),
        "verification_commands": _dump(r.verification_commands),
        "session_id": r.session_id,
        "status_reason": r.status_reason,
    }


def task_from_row(row: Row) -> Task:
    return Task(
        task_id=row["task_id"],
        source=TaskSource(row["source"]),
        created_by=row["created_by"],
        task_type=TaskType(row["task_type"]),
        title=row["title"],
        instruction=row["instruction"],
        repository=row["repository"],
        base_ref=row["base_ref"],
        autonomy_level=AutonomyLevel(row["autonomy_level"]),
        status=TaskStatus(row["status"]),
        created_at=_at(row["created_at"]),
        updated_at=_at(row["updated_at"]),
        labels=_load(row["labels"]),
        allowed_paths=tuple(_load(row["allowed_paths"])),
        forbidden_paths=tuple(_load(row["forbidden_paths"])),
        verification_commands=tuple(_load(row["verification_commands"])),
        session_id=row["session_id"],
        status_reason=row["status_reason"],
    )


def session_to_row(r: Session) -> RowValues:
    return {
        "session_id": r.session_id,
        "owner": r.owner,
        "source": r.source.value,
        "title": r.title,
        "status": r.status.value,
        "created_at": _iso(r.created_at),
        "last_activity_at": _iso(r.last_activity_at),
    }


def session_from_row(row: Row) -> Session:
    return Session(
        session_id=row["session_id"],
        owner=row["owner"],
        source=TaskSource(row["source"]),
        title=row["title"],
        status=SessionStatus(row["status"]),
        created_at=_at(row["created_at"]),
        last_activity_at=_at(row["last_activity_at"]),
    )


def session_message_to_row(r: SessionMessage) -> RowValues:
    return {
        "message_id": r.message_id,
        "session_id": r.session_id,
        "role": r.role.value,
        "content": r.content,
        "created_at": _iso(r.created_at),
        "metadata": _dump(r.metadata),
    }


def session_message_from_row(row: Row) -> SessionMessage:
    return SessionMessage(
        message_id=row["message_id"],
        session_id=row["session_id"],
        role=MessageRole(row["role"]),
        content=row["content"],
        created_at=_at(row["created_at"]),
        metadata=_load(row["metadata"]),
    )


def run_to_row(r: Run) -> RowValues:
    return {
        "run_id": r.run_id,
        "task_id": r.task_id,
        "number": r.number,
        "status": r.status.value,
        "execution_spec": _dump(r.execution_spec),
        "spec_digest": r.spec_digest,
        "policy_decision": _dump(r.policy_decision),
        "base_commit": r.base_commit,
        "budget": _dump(r.budget),
        "created_at": _iso(r.created_at),
        "started_at": to_iso(r.started_at),
        "completed_at": to_iso(r.completed_at),
        "failure_summary": r.failure_summary,
        "active_attempt_id": r.active_attempt_id,
        "not_before": to_iso(r.not_before),
        "cancel_requested_by": r.cancel_requested_by,
        "cancel_reason": r.cancel_reason,
    }


def run_from_row(row: Row) -> Run:
    return Run(
        run_id=row["run_id"],
        task_id=row["task_id"],
        number=row["number"],
        status=RunStatus(row["status"]),
        execution_spec=nested.execution_spec(_load(row["execution_spec"])),
        spec_digest=row["spec_digest"],
        policy_decision=_load(row["policy_decision"]),
        base_commit=row["base_commit"],
        budget=nested.budget(_load(row["budget"])),
        created_at=_at(row["created_at"]),
        started_at=None if (v := row["started_at"]) is None else _at(v),
        completed_at=None if (v := row["completed_at"]) is None else _at(v),
        failure_summary=row["failure_summary"],
        active_attempt_id=row["active_attempt_id"],
        not_before=None if (v := row["not_before"]) is None else _at(v),
        cancel_requested_by=row["cancel_requested_by"],
        cancel_reason=row["cancel_reason"],
    )


def attempt_to_row(r: Attempt) -> RowValues:
    return {
        "attempt_id": r.attempt_id,
        "run_id": r.run_id,
        "attempt_number": r.attempt_number,
        "worker_id": r.worker_id,
        "lease_id": r.lease_id,
        "status": r.status.value,
        "started_at": _iso(r.started_at),
        "last_heartbeat_at": _iso(r.last_heartbeat_at),
        "lease_expires_at": _iso(r.lease_expires_at),
        "ended_at": to_iso(r.ended_at),
        "failure_code": r.failure_code,
        "end_reason": r.end_reason,
    }


def attempt_from_row(row: Row) -> Attempt:
    return Attempt(
        attempt_id=row["attempt_id"],
        run_id=row["run_id"],
        attempt_number=row["attempt_number"],
        worker_id=row["worker_id"],
        lease_id=row["lease_id"],
        status=AttemptStatus(row["status"]),
        started_at=_at(row["started_at"]),
        last_heartbeat_at=_at(row["last_heartbeat_at"]),
        lease_expires_at=_at(row["lease_expires_at"]),
        ended_at=None if (v := row["ended_at"]) is None else _at(v),
        failure_code=row["failure_code"],
        end_reason=row["end_reason"],
    )


def step_to_row(r: Step) -> RowValues:
    return {
        "step_id": r.step_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "sequence_number": r.sequence_number,
        "type": r.type.value,
        "status": r.status.value,
        "title": r.title,
        "started_at": _iso(r.started_at),
        "ended_at": to_iso(r.ended_at),
        "attributes": _dump(r.attributes),
        "artifacts": _dump(r.artifacts),
        "failure_code": r.failure_code,
        "tool_call_id": r.tool_call_id,
    }


def step_from_row(row: Row) -> Step:
    return Step(
        step_id=row["step_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        sequence_number=row["sequence_number"],
        type=StepType(row["type"]),
        status=StepStatus(row["status"]),
        title=row["title"],
        started_at=_at(row["started_at"]),
        ended_at=None if (v := row["ended_at"]) is None else _at(v),
        attributes=_load(row["attributes"]),
        artifacts=tuple(_load(row["artifacts"])),
        failure_code=row["failure_code"],
        tool_call_id=row["tool_call_id"],
    )


def tool_call_to_row(r: ToolCall) -> RowValues:
    return {
        "tool_call_id": r.tool_call_id,
        "step_id": r.step_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "tool_name": r.tool_name,
        "arguments_json": r.arguments_json,
        "decision": r.decision.value,
        "matched_rule": r.matched_rule,
        "denial_reason": r.denial_reason,
        "requested_at": _iso(r.requested_at),
        "spec_digest": r.spec_digest,
        "result": None if (v := r.result) is None else _dump(v),
        "completed_at": to_iso(r.completed_at),
        "approved_by": r.approved_by,
    }


def tool_call_from_row(row: Row) -> ToolCall:
    return ToolCall(
        tool_call_id=row["tool_call_id"],
        step_id=row["step_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        tool_name=row["tool_name"],
        arguments_json=row["arguments_json"],
        decision=ToolDecision(row["decision"]),
        matched_rule=row["matched_rule"],
        denial_reason=row["denial_reason"],
        requested_at=_at(row["requested_at"]),
        spec_digest=row["spec_digest"],
        result=None if (v := row["result"]) is None else nested.tool_result(_load(v)),
        completed_at=None if (v := row["completed_at"]) is None else _at(v),
        approved_by=row["approved_by"],
    )


def artifact_to_row(r: Artifact) -> RowValues:
    return {
        "artifact_id": r.artifact_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "produced_by_step": r.produced_by_step,
        "type": r.type.value,
        "name": r.name,
        "uri": r.uri,
        "sha256": r.sha256,
        "size_bytes": r.size_bytes,
        "redaction_status": r.redaction_status.value,
        "visibility": r.visibility.value,
        "created_at": _iso(r.created_at),
        "spec_digest": r.spec_digest,
        "metadata": _dump(r.metadata),
    }


def artifact_from_row(row: Row) -> Artifact:
    return Artifact(
        artifact_id=row["artifact_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        produced_by_step=row["produced_by_step"],
        type=ArtifactType(row["type"]),
        name=row["name"],
        uri=row["uri"],
        sha256=row["sha256"],
        size_bytes=row["size_bytes"],
        redaction_status=RedactionStatus(row["redaction_status"]),
        visibility=ArtifactVisibility(row["visibility"]),
        created_at=_at(row["created_at"]),
        spec_digest=row["spec_digest"],
        metadata=_load(row["metadata"]),
    )


def patch_to_row(r: Patch) -> RowValues:
    return {
        "patch_id": r.patch_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "base_commit": r.base_commit,
        "unified_diff_artifact": r.unified_diff_artifact,
        "file_changes": _dump(r.file_changes),
        "stats": _dump(r.stats),
        "boundary_check": _dump(r.boundary_check),
        "apply_status": r.apply_status.value,
        "created_at": _iso(r.created_at),
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
        file_changes=tuple(nested.file_change(x) for x in _load(row["file_changes"])),
        stats=nested.patch_stats(_load(row["stats"])),
        boundary_check=nested.patch_boundary_check(_load(row["boundary_check"])),
        apply_status=PatchApplyStatus(row["apply_status"]),
        created_at=_at(row["created_at"]),
        apply_error=row["apply_error"],
        tree_id=row["tree_id"],
    )


def verification_report_to_row(r: VerificationReport) -> RowValues:
    return {
        "verification_report_id": r.verification_report_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "status": r.status.value,
        "checks": _dump(r.checks),
        "full_report_artifact": r.full_report_artifact,
        "started_at": _iso(r.started_at),
        "ended_at": _iso(r.ended_at),
    }


def verification_report_from_row(row: Row) -> VerificationReport:
    return VerificationReport(
        verification_report_id=row["verification_report_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        status=VerificationStatus(row["status"]),
        checks=tuple(nested.verification_check(x) for x in _load(row["checks"])),
        full_report_artifact=row["full_report_artifact"],
        started_at=_at(row["started_at"]),
        ended_at=_at(row["ended_at"]),
    )


def judge_report_to_row(r: JudgeReport) -> RowValues:
    return {
        "judge_report_id": r.judge_report_id,
        "run_id": r.run_id,
        "attempt_id": r.attempt_id,
        "judge": r.judge,
        "status": r.status.value,
        "findings": _dump(r.findings),
        "confidence": r.confidence,
        "report_artifact": r.report_artifact,
        "created_at": _iso(r.created_at),
        "summary": r.summary,
    }


def judge_report_from_row(row: Row) -> JudgeReport:
    return JudgeReport(
        judge_report_id=row["judge_report_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        judge=row["judge"],
        status=JudgeStatus(row["status"]),
        findings=tuple(nested.judge_finding(x) for x in _load(row["findings"])),
        confidence=float(row["confidence"]),
        report_artifact=row["report_artifact"],
        created_at=_at(row["created_at"]),
        summary=row["summary"],
    )


def verdict_to_row(r: Verdict) -> RowValues:
    return {
        "verdict_id": r.verdict_id,
        "run_id": r.run_id,
        "status": r.status.value,
        "pr_eligibility": r.pr_eligibility.value,
        "reasons": _dump(r.reasons),
        "evidence": _dump(r.evidence),
        "chain": _dump(r.chain),
        "decided_at": _iso(r.decided_at),
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
        reasons=tuple(_load(row["reasons"])),
        evidence=tuple(_load(row["evidence"])),
        chain=tuple(nested.chain_link(x) for x in _load(row["chain"])),
        decided_at=_at(row["decided_at"]),
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
        "created_at": _iso(r.created_at),
    }


def approval_from_row(row: Row) -> Approval:
    return Approval(
        approval_id=row["approval_id"],
        run_id=row["run_id"],
        verdict_id=row["verdict_id"],
        decision=ApprovalDecision(row["decision"]),
        by=row["by"],
        reason=row["reason"],
        created_at=_at(row["created_at"]),
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
        "created_at": _iso(r.created_at),
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
        created_at=_at(row["created_at"]),
    )


def event_from_row(row: Row) -> Event:
    """Events are written by the event log, whose hash covers the exact stored text."""
    return Event(
        seq=row["seq"],
        type=EventType(row["type"]),
        task_id=row["task_id"],
        run_id=row["run_id"],
        attempt_id=row["attempt_id"],
        step_id=row["step_id"],
        payload=_load(row["payload"]),
        created_at=_at(row["created_at"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )


@dataclass(frozen=True, slots=True)
class RowMapping(Generic[R]):
    """How one record type is stored: its table, key column and the two mapping functions."""

    table: str
    key: str
    kind: str  # the record's name in messages ("no run ...")
    to_row: Callable[[R], RowValues]
    from_row: Callable[[Row], R]


TASKS = RowMapping("task", "task_id", "task", task_to_row, task_from_row)
SESSIONS = RowMapping("session", "session_id", "session", session_to_row, session_from_row)
MESSAGES = RowMapping("session_message", "message_id", "message", session_message_to_row,
                      session_message_from_row)
RUNS = RowMapping("run", "run_id", "run", run_to_row, run_from_row)
ATTEMPTS = RowMapping("attempt", "attempt_id", "attempt", attempt_to_row, attempt_from_row)
STEPS = RowMapping("step", "step_id", "step", step_to_row, step_from_row)
TOOL_CALLS = RowMapping("tool_call", "tool_call_id", "toolcall", tool_call_to_row,
                        tool_call_from_row)
ARTIFACTS = RowMapping("artifact", "artifact_id", "artifact", artifact_to_row, artifact_from_row)
PATCHES = RowMapping("patch", "patch_id", "patch", patch_to_row, patch_from_row)
VERIFICATIONS = RowMapping("verification_report", "verification_report_id", "verification",
                           verification_report_to_row, verification_report_from_row)
JUDGEMENTS = RowMapping("judge_report", "judge_report_id", "judge", judge_report_to_row,
                        judge_report_from_row)
VERDICTS = RowMapping("verdict", "verdict_id", "verdict", verdict_to_row, verdict_from_row)
APPROVALS = RowMapping("approval", "approval_id", "approval", approval_to_row, approval_from_row)
PULL_REQUESTS = RowMapping("pull_request", "pr_id", "pr", pull_request_to_row,
                           pull_request_from_row)
