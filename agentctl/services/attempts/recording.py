"""The records and events an attempt writes, built the same way whichever ledger stores them.

Pure functions of the lease and the moment: the SQL ledger and the in-memory one call these, so
both hold exactly the same rows and the same events in the same order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from agentctl.domain import ids
from agentctl.domain.artifact import Artifact
from agentctl.domain.audit import call_digest, digest
from agentctl.domain.enums import EventType, StepStatus, StepType, ToolDecision
from agentctl.domain.events import NewEvent
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.step import Step, ToolCall, ToolResult, failure_code_of, step_status_of
from agentctl.services.ports import CallRequest, Lease, NewArtifact, Produced, StepEnd


class AttemptEvents:
    """Events and records of one attempt: ids, sequence numbers and payloads in one place."""

    def __init__(self, lease: Lease, spec_digest: str) -> None:
        self.lease = lease
        self.spec_digest = spec_digest
        self._sequence = 0

    @property
    def last_sequence_number(self) -> int:
        """The latest step's number, the one the run tree shows."""
        return self._sequence

    def event(self, type_: EventType, now: datetime, step_id: str | None = None, /,
              **payload: object) -> NewEvent:
        return self._event(type_, now, step_id, payload)

    def _event(self, type_: EventType, now: datetime, step_id: str | None,
               payload: dict[str, object]) -> NewEvent:
        """`event` with the payload as built: the tool-call events skip the keyword packing."""
        lease = self.lease
        return NewEvent(type=type_, created_at=now, task_id=lease.task_id, run_id=lease.run_id,
                        attempt_id=lease.attempt_id, step_id=step_id, payload=payload)

    def step(self, type_: StepType, title: str, now: datetime) -> Step:
        self._sequence += 1
        return Step(step_id=ids.new_id("step"), run_id=self.lease.run_id,
                    attempt_id=self.lease.attempt_id, sequence_number=self._sequence,
                    type=type_, status=StepStatus.STARTED, title=title, started_at=now)

    def started(self, step: Step) -> NewEvent:
        return self.event(EventType.STEP_STARTED, step.started_at, step.step_id,
                          type=step.type.value, title=step.title)

    def finished(self, step: Step, end: StepEnd, now: datetime,
                 ) -> tuple[Step, list[Artifact], list[NewEvent]]:
        """The finished step, its artifacts, and the events of what it produced and of its
        end, in the order they happened."""
        stored = [self.artifact(step, draft, now) for draft in end.artifacts]
        done = step.finished(end.status, now, failure_code=end.failure_code,
                             attributes=end.attributes,
                             artifacts=tuple(a.artifact_id for a in stored))
        events = [event for record in end.produced
                  for event in self.produced(record, step.step_id)]
        events.append(self.event(EventType.STEP_COMPLETED, now, step.step_id,
                                 type=step.type.value, status=end.status.value,
                                 failureCode=end.failure_code,
                                 artifacts=[a.artifact_id for a in stored],
                                 artifactDigests={a.artifact_id: digest(a) for a in stored}))
        return done, stored, events

    def produced(self, record: Produced, step_id: str) -> list[NewEvent]:
        """The event that announces a record. A VerificationReport has none of its own: the
        VerifierCompleted status change that follows it names it."""
        match record:
            case Patch():
                boundary, stats = record.boundary_check, record.stats
                return [self.event(
                    EventType.PATCH_PRODUCED, record.created_at, step_id,
                    patchId=record.patch_id, files=stats.files_changed,
                    additions=stats.additions, deletions=stats.deletions,
                    boundaryPassed=boundary.passed, applyStatus=record.apply_status.value,
                    forbiddenPathViolations=list(boundary.forbidden_path_violations),
                    treeId=record.tree_id, patchDigest=digest(record))]
            case JudgeReport():
                return [self.event(
                    EventType.JUDGE_COMPLETED, record.created_at, step_id,
                    judgeReportId=record.judge_report_id, judge=record.judge,
                    status=record.status.value, confidence=record.confidence,
                    findings=len(record.findings), judgeDigest=digest(record))]
            case _:
                return []

    def artifact(self, step: Step, draft: NewArtifact, now: datetime) -> Artifact:
        return Artifact(
            artifact_id=draft.artifact_id, run_id=self.lease.run_id,
            attempt_id=self.lease.attempt_id, produced_by_step=step.step_id, type=draft.type,
            name=draft.name, uri=draft.blob.uri, sha256=draft.blob.sha256,
            size_bytes=draft.blob.size_bytes, redaction_status=draft.redaction_status,
            visibility=draft.visibility, created_at=now, spec_digest=self.spec_digest,
            metadata=dict(draft.metadata),
        )

    def call(self, request: CallRequest, result: ToolResult | None = None,
             completed_at: datetime | None = None, *,
             attributes: Mapping[str, object] | None = None) -> tuple[Step, ToolCall]:
        """A TOOL_CALL step and its ToolCall: STARTED, or finished when `completed_at` is given
        (built in their final state at once: this is the hot path of a busy agent)."""
        self._sequence += 1
        step_id, call_id = ids.new_id("step"), ids.new_id("toolcall")
        finished = completed_at is not None
        status, code = _call_status(request.decision, result) if finished \
            else (StepStatus.STARTED, None)
        step = Step(step_id=step_id, run_id=self.lease.run_id, attempt_id=self.lease.attempt_id,
                    sequence_number=self._sequence, type=StepType.TOOL_CALL, status=status,
                    title=request.tool, started_at=request.requested_at, ended_at=completed_at,
                    failure_code=code, tool_call_id=call_id, attributes=attributes or {})
        call = ToolCall(tool_call_id=call_id, step_id=step_id, run_id=self.lease.run_id,
                        attempt_id=self.lease.attempt_id, tool_name=request.tool,
                        arguments_json=request.arguments_json, decision=request.decision,
                        matched_rule=request.matched_rule, denial_reason=request.denial_reason,
                        requested_at=request.requested_at, spec_digest=self.spec_digest,
                        approved_by=request.approved_by, result=result,
                        completed_at=completed_at)
        return step, call

    def call_ended(self, step: Step, call: ToolCall, result: ToolResult | None,
                   now: datetime, artifacts: Sequence[Artifact] = (), *,
                   attributes: Mapping[str, object] | None = None) -> tuple[Step, ToolCall]:
        status, code = _call_status(call.decision, result)
        return (step.finished(status, now, failure_code=code, attributes=attributes,
                              artifacts=tuple(a.artifact_id for a in artifacts)),
                replace(call, result=result, completed_at=now))

    def call_events(self, call: ToolCall, now: datetime, *, finished: bool) -> list[NewEvent]:
        """TOOL_CALL steps are told by their ToolCall events, not StepStarted/StepCompleted."""
        events = [self._event(EventType.TOOL_CALL_REQUESTED, call.requested_at, call.step_id,
                              {"toolCallId": call.tool_call_id, "tool": call.tool_name,
                               "decision": call.decision.value,
                               "matchedRule": call.matched_rule})]
        if call.decision is not ToolDecision.ALLOWED:
            events.append(self.event(EventType.TOOL_CALL_DENIED, now, call.step_id,
                                     toolCallId=call.tool_call_id, tool=call.tool_name,
                                     decision=call.decision.value, reason=call.denial_reason,
                                     toolCallDigest=call_digest(call)))
        elif finished:
            events.append(self.call_completed(call, now))
        return events

    def call_completed(self, call: ToolCall, now: datetime,
                       artifacts: Sequence[Artifact] = ()) -> NewEvent:
        result = call.result
        payload: dict[str, object] = {
            "toolCallId": call.tool_call_id, "tool": call.tool_name,
            "ok": result is not None and result.ok,
            "outcome": result.outcome.value if result else None,
            "exitCode": result.exit_code if result else None,
            "toolCallDigest": call_digest(call)}
        if artifacts:
            payload["artifactDigests"] = {a.artifact_id: digest(a) for a in artifacts}
        return self._event(EventType.TOOL_CALL_COMPLETED, now, call.step_id, payload)


def _call_status(decision: ToolDecision, result: ToolResult | None) -> tuple[StepStatus, str | None]:
    if decision is not ToolDecision.ALLOWED:
        return StepStatus.DENIED, decision.value
    if result is None:
        return StepStatus.FAILED, "tool_error"
    return step_status_of(result), failure_code_of(result)


def arguments_json(arguments: Mapping[str, object], clean: Callable[[str], str]) -> str:
    """Arguments as stored: redacted, and long contents replaced by their size (the patch
    holds the content; the record says what was asked)."""
    def shrink(value: object) -> object:
        if isinstance(value, str):
            if len(value) > 500:
                digest = hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()
                return f"<{len(value)} chars, sha256:{digest[:16]}>"
            return clean(value)
        return value

    return json.dumps({k: shrink(v) for k, v in arguments.items()}, sort_keys=True)
