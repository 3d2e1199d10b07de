"""Rows of runs and of what an attempt records as it works: attempts, steps, tool calls,
artifacts and the event log. The evidence it is judged by lives in `evidence`."""

from __future__ import annotations

from agentctl.domain.artifact import Artifact
from agentctl.domain.clock import to_iso
from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    AttemptStatus,
    EventType,
    RedactionStatus,
    RunStatus,
    StepStatus,
    StepType,
    ToolDecision,
)
from agentctl.domain.events import Event
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import Step, ToolCall
from agentctl.store import json_columns as nested
from agentctl.store.rows import Row, RowMapping, RowValues, at, dump, dump_plain, iso, load


def run_to_row(r: Run) -> RowValues:
    return {
        "run_id": r.run_id,
        "task_id": r.task_id,
        "number": r.number,
        "status": r.status.value,
        "execution_spec": dump(r.execution_spec),
        "spec_digest": r.spec_digest,
        "policy_decision": dump(r.policy_decision),
        "base_commit": r.base_commit,
        "budget": dump(r.budget),
        "created_at": iso(r.created_at),
        "started_at": to_iso(r.started_at),
        "completed_at": to_iso(r.completed_at),
        "failure_summary": r.failure_summary,
        "active_attempt_id": r.active_attempt_id,
        "not_before": to_iso(r.not_before),
        "cancel_requested_by": r.cancel_requested_by,
        "cancel_reason": r.cancel_reason,
        "replay_of": r.replay_of,
    }


def run_from_row(row: Row) -> Run:
    return Run(
        run_id=row["run_id"],
        task_id=row["task_id"],
        number=row["number"],
        status=RunStatus(row["status"]),
        execution_spec=nested.execution_spec(load(row["execution_spec"])),
        spec_digest=row["spec_digest"],
        policy_decision=load(row["policy_decision"]),
        base_commit=row["base_commit"],
        budget=nested.budget(load(row["budget"])),
        created_at=at(row["created_at"]),
        started_at=None if (v := row["started_at"]) is None else at(v),
        completed_at=None if (v := row["completed_at"]) is None else at(v),
        failure_summary=row["failure_summary"],
        active_attempt_id=row["active_attempt_id"],
        not_before=None if (v := row["not_before"]) is None else at(v),
        cancel_requested_by=row["cancel_requested_by"],
        cancel_reason=row["cancel_reason"],
        replay_of=row["replay_of"],
    )


def attempt_to_row(r: Attempt) -> RowValues:
    return {
        "attempt_id": r.attempt_id,
        "run_id": r.run_id,
        "attempt_number": r.attempt_number,
        "worker_id": r.worker_id,
        "lease_id": r.lease_id,
        "status": r.status.value,
        "started_at": iso(r.started_at),
        "last_heartbeat_at": iso(r.last_heartbeat_at),
        "lease_expires_at": iso(r.lease_expires_at),
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
        started_at=at(row["started_at"]),
        last_heartbeat_at=at(row["last_heartbeat_at"]),
        lease_expires_at=at(row["lease_expires_at"]),
        ended_at=None if (v := row["ended_at"]) is None else at(v),
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
        "started_at": iso(r.started_at),
        "ended_at": to_iso(r.ended_at),
        "attributes": dump(r.attributes),
        "artifacts": dump(r.artifacts),
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
        started_at=at(row["started_at"]),
        ended_at=None if (v := row["ended_at"]) is None else at(v),
        attributes=load(row["attributes"]),
        artifacts=tuple(load(row["artifacts"])),
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
        "requested_at": iso(r.requested_at),
        "spec_digest": r.spec_digest,
        "result": None if (v := r.result) is None else dump_plain(nested.tool_result_json(v)),
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
        requested_at=at(row["requested_at"]),
        spec_digest=row["spec_digest"],
        result=None if (v := row["result"]) is None else nested.tool_result(load(v)),
        completed_at=None if (v := row["completed_at"]) is None else at(v),
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
        "created_at": iso(r.created_at),
        "spec_digest": r.spec_digest,
        "metadata": dump(r.metadata),
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
        created_at=at(row["created_at"]),
        spec_digest=row["spec_digest"],
        metadata=load(row["metadata"]),
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
        payload=load(row["payload"]),
        created_at=at(row["created_at"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )


RUNS = RowMapping("run", "run_id", "run", run_to_row, run_from_row)
ATTEMPTS = RowMapping("attempt", "attempt_id", "attempt", attempt_to_row, attempt_from_row)
STEPS = RowMapping("step", "step_id", "step", step_to_row, step_from_row)
TOOL_CALLS = RowMapping("tool_call", "tool_call_id", "toolcall", tool_call_to_row,
                        tool_call_from_row)
ARTIFACTS = RowMapping("artifact", "artifact_id", "artifact", artifact_to_row, artifact_from_row)
