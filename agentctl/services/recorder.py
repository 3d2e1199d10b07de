"""Every write an attempt makes, fenced by its lease: steps, tool calls, artifacts, status.

Each method is one transaction that first proves (compare-and-set on the attempt row) that this
attempt still holds the run's unexpired lease; a stale attempt's writes raise LeaseLost and
change nothing.

Finished tool calls that only touched the workspace, and short steps, are batched: they are
committed, in order, with the next write, or when the batch is full or old. A crash can lose at
most that batch, and the workspace those calls changed dies with the attempt, so no unrecorded
effect ever reaches a patch. A commit per call would cost a WAL commit each (~0.4 ms), ten times
the rows themselves, and with several workers every commit is a turn at the one write lock.
Long steps (a clone, a verifier command) are written when they start, so they can be watched.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from agentctl.domain import ids, transitions
from agentctl.domain.artifact import Artifact
from agentctl.domain.clock import Clock, utcnow
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
from agentctl.domain.events import NewEvent
from agentctl.domain.run import Run
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.domain.verdict import Decision
from agentctl.services import runs
from agentctl.services.runs import Lease
from agentctl.store import Store
from agentctl.store.blobs import StoredBlob
from agentctl.store.uow import UnitOfWork

BATCH_CALLS = 1000
BATCH_SECONDS = 0.25


@dataclass(frozen=True, slots=True)
class NewArtifact:
    type: ArtifactType
    name: str
    blob: StoredBlob
    visibility: ArtifactVisibility
    redaction_status: RedactionStatus
    metadata: Mapping[str, str] = field(default_factory=dict)
    artifact_id: str = field(default_factory=lambda: ids.new_id("artifact"))


@dataclass
class _ToolBatch:
    """Consecutive finished tool calls, written with one executemany per table."""

    steps: list[Step] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    events: list[NewEvent] = field(default_factory=list)

    def add(self, step: Step, call: ToolCall, events: list[NewEvent]) -> None:
        self.steps.append(step)
        self.calls.append(call)
        self.events += events


class AttemptRecorder:
    def __init__(self, store: Store, lease: Lease, *, spec_digest: str,
                 clock: Clock = utcnow) -> None:
        self.store = store
        self.lease = lease
        self.spec_digest = spec_digest
        self.clock = clock
        self._sequence = 0
        self._pending: list[_ToolBatch | Callable[[UnitOfWork], None]] = []
        self._pending_calls = 0
        self._pending_since = 0.0
        self._unwritten: set[str] = set()  # short steps whose start is not on record yet

    # --- plumbing ---------------------------------------------------------------------------
    @contextmanager
    def write(self) -> Iterator[UnitOfWork]:
        """A fenced transaction for this attempt; what was batched lands first, in order."""
        with self.store.unit_of_work() as uow:
            uow.fence(self.lease.attempt_id, self.lease.lease_id, self.clock())
            for item in self._pending:
                if isinstance(item, _ToolBatch):
                    uow.steps.add_many(item.steps)
                    uow.tool_calls.add_many(item.calls)
                    uow.events.append_many(item.events)
                else:
                    item(uow)
            yield uow
        self._pending, self._pending_calls = [], 0

    def flush(self) -> None:
        """Commit what is batched now (before anything outside the workspace happens)."""
        if self._pending:
            with self.write():
                pass

    def _defer(self, item: _ToolBatch | Callable[[UnitOfWork], None], calls: int = 0) -> None:
        if not self._pending:
            self._pending_since = time.monotonic()
        self._pending.append(item)
        self._pending_calls += calls
        if (self._pending_calls >= BATCH_CALLS
                or time.monotonic() - self._pending_since >= BATCH_SECONDS):
            self.flush()

    def _event(self, type_: EventType, now: datetime, step_id: str | None = None,
               **payload: object) -> NewEvent:
        return NewEvent(type=type_, created_at=now, task_id=self.lease.task_id,
                        run_id=self.lease.run_id, attempt_id=self.lease.attempt_id,
                        step_id=step_id, payload=payload)

    def _next_sequence(self) -> int:
        self._sequence += 1
        return self._sequence

    # --- run and attempt --------------------------------------------------------------------
    def activate(self) -> Run:
        """The worker starts: attempt ACTIVE, run PREPARING_WORKSPACE."""
        now = self.clock()
        with self.write() as uow:
            attempt = uow.attempts.get(self.lease.attempt_id)
            uow.attempts.save(attempt.with_status(AttemptStatus.ACTIVE, now),
                              expected_status=attempt.status.value)
            run = uow.runs.get(self.lease.run_id)
            preparing = run.with_status(RunStatus.PREPARING_WORKSPACE, now)
            uow.runs.save(preparing, expected_status=run.status.value)
            uow.events.append(self._event(
                EventType.ATTEMPT_STARTED, now, attemptNumber=self.lease.attempt_number,
                workerId=self.lease.worker_id, runStatus=preparing.status.value))
        return preparing

    def advance(self, target: RunStatus, event: EventType, **payload: object) -> None:
        """Move the run along its working states (ends go through `finish` and `fail`)."""
        now = self.clock()
        with self.write() as uow:
            current = RunStatus(uow.run_status(self.lease.run_id))
            transitions.advance(current, target, f"run {self.lease.run_id}")
            uow.set_run_status(self.lease.run_id, expected=current.value, target=target.value)
            uow.events.append(self._event(event, now, runStatus=target.value, **payload))

    def finish(self, decision: Decision, *, failure_summary: str | None = None) -> Run:
        with self.write() as uow:
            run = uow.runs.get(self.lease.run_id)
            attempt = uow.attempts.get(self.lease.attempt_id)
            return runs.finish_run(uow, run, decision, now=self.clock(), attempt=attempt,
                                   failure_summary=failure_summary)

    def fail(self, *, code: str, reason: str, final: Decision) -> Run:
        """Infrastructure failure: a fresh attempt while the budget lasts, else `final`."""
        with self.write() as uow:
            run = uow.runs.get(self.lease.run_id)
            attempt = uow.attempts.get(self.lease.attempt_id)
            return runs.fail_attempt(uow, run, attempt, status=AttemptStatus.FAILED, code=code,
                                     reason=reason, now=self.clock(), final=final)

    # --- steps and artifacts ----------------------------------------------------------------
    def begin_step(self, type_: StepType, title: str,
                   attributes: Mapping[str, object] | None = None, *, live: bool = True) -> Step:
        """A step starts; a `live` one is on record at once, a short one when it ends."""
        now = self.clock()
        step = Step(step_id=ids.new_id("step"), run_id=self.lease.run_id,
                    attempt_id=self.lease.attempt_id, sequence_number=self._next_sequence(),
                    type=type_, status=StepStatus.STARTED, title=title, started_at=now,
                    attributes=dict(attributes or {}))
        if not live:
            self._unwritten.add(step.step_id)
            return step
        with self.write() as uow:
            uow.steps.add(step)
            uow.events.append(self._started(step))
        return step

    def _started(self, step: Step) -> NewEvent:
        return self._event(EventType.STEP_STARTED, step.started_at, step.step_id,
                           type=step.type.value, title=step.title)

    def end_step(self, step: Step, status: StepStatus, *, failure_code: str | None = None,
                 attributes: Mapping[str, object] | None = None,
                 artifacts: Sequence[NewArtifact] = (),
                 also: Callable[[UnitOfWork, list[Artifact]], None] | None = None,
                 ) -> tuple[Step, list[Artifact]]:
        """Finish a step with the artifacts it produced; `also` adds records in the same transaction."""
        now = self.clock()
        stored = [self._artifact(step, draft, now) for draft in artifacts]
        finished = step.finished(status, now, failure_code=failure_code, attributes=attributes,
                                 artifacts=tuple(a.artifact_id for a in stored))
        completed = self._event(EventType.STEP_COMPLETED, now, step.step_id,
                                type=step.type.value, status=status.value,
                                failureCode=failure_code,
                                artifacts=[a.artifact_id for a in stored])
        if step.step_id in self._unwritten:
            self._unwritten.discard(step.step_id)

            def record(uow: UnitOfWork) -> None:
                uow.artifacts.add_many(stored)
                uow.steps.add(finished)
                if also is not None:
                    also(uow, stored)
                uow.events.append(self._started(step), completed)

            self._defer(record)
            return finished, stored
        with self.write() as uow:
            uow.artifacts.add_many(stored)
            uow.steps.save(finished, expected_status=step.status.value)
            if also is not None:
                also(uow, stored)
            uow.events.append(completed)
        return finished, stored

    def _artifact(self, step: Step, draft: NewArtifact, now: datetime) -> Artifact:
        return Artifact(
            artifact_id=draft.artifact_id, run_id=self.lease.run_id,
            attempt_id=self.lease.attempt_id, produced_by_step=step.step_id, type=draft.type,
            name=draft.name, uri=draft.blob.uri, sha256=draft.blob.sha256,
            size_bytes=draft.blob.size_bytes, redaction_status=draft.redaction_status,
            visibility=draft.visibility, created_at=now, spec_digest=self.spec_digest,
            metadata=dict(draft.metadata),
        )

    def put_bytes(self, data: bytes) -> StoredBlob:
        return self.store.blobs.put_bytes(data)

    def put_file(self, path: Path, *, move: bool = False) -> StoredBlob:
        return self.store.blobs.put_file(path, move=move)

    # --- tool calls -------------------------------------------------------------------------
    def tool_call(self, *, tool: str, arguments_json: str, decision: ToolDecision,
                  matched_rule: str | None, denial_reason: str | None, requested_at: datetime,
                  result: ToolResult | None, approved_by: str | None = None) -> ToolCall:
        """A finished (or denied) workspace-only tool call, as one step; batched."""
        now = self.clock()
        step, call = self._tool_records(tool, arguments_json, decision, matched_rule,
                                        denial_reason, requested_at, approved_by,
                                        result=result, completed_at=now)
        events = self._tool_events(step, call, now, finished=True)
        last = self._pending[-1] if self._pending else None
        if isinstance(last, _ToolBatch):
            last.add(step, call, events)
            self._pending_calls += 1
            if (self._pending_calls >= BATCH_CALLS
                    or time.monotonic() - self._pending_since >= BATCH_SECONDS):
                self.flush()
        else:
            batch = _ToolBatch()
            batch.add(step, call, events)
            self._defer(batch, calls=1)
        return call

    def begin_tool_call(self, *, tool: str, arguments_json: str, matched_rule: str | None,
                        requested_at: datetime, approved_by: str | None = None,
                        ) -> tuple[Step, ToolCall]:
        """An allowed, long-running tool call is on record before its side effect starts."""
        step, call = self._tool_records(tool, arguments_json, ToolDecision.ALLOWED, matched_rule,
                                        None, requested_at, approved_by)
        with self.write() as uow:
            uow.steps.add(step)
            uow.tool_calls.add(call)
            uow.events.append_many(self._tool_events(step, call, requested_at, finished=False))
        return step, call

    def end_tool_call(self, step: Step, call: ToolCall, result: ToolResult,
                      artifacts: Sequence[NewArtifact] = ()) -> ToolCall:
        now = self.clock()
        stored = [self._artifact(step, draft, now) for draft in artifacts]
        finished_call = replace(call, result=result, completed_at=now)
        finished_step = step.finished(_step_status(call.decision, result), now,
                                      failure_code=_failure_code(call.decision, result),
                                      artifacts=tuple(a.artifact_id for a in stored))
        with self.write() as uow:
            uow.artifacts.add_many(stored)
            uow.steps.save(finished_step, expected_status=step.status.value)
            uow.tool_calls.save(finished_call)
            uow.events.append(self._tool_completed(finished_call, now))
        return finished_call

    def _tool_records(self, tool: str, arguments_json: str, decision: ToolDecision,
                      matched_rule: str | None, denial_reason: str | None,
                      requested_at: datetime, approved_by: str | None, *,
                      result: ToolResult | None = None, completed_at: datetime | None = None,
                      ) -> tuple[Step, ToolCall]:
        """The step and its tool call: STARTED, or already finished when `completed_at` is given."""
        step_id, call_id = ids.new_id("step"), ids.new_id("toolcall")
        finished = completed_at is not None
        step = Step(step_id=step_id, run_id=self.lease.run_id, attempt_id=self.lease.attempt_id,
                    sequence_number=self._next_sequence(), type=StepType.TOOL_CALL,
                    status=_step_status(decision, result) if finished else StepStatus.STARTED,
                    title=tool, started_at=requested_at, ended_at=completed_at,
                    failure_code=_failure_code(decision, result) if finished else None,
                    tool_call_id=call_id)
        call = ToolCall(tool_call_id=call_id, step_id=step_id, run_id=self.lease.run_id,
                        attempt_id=self.lease.attempt_id, tool_name=tool,
                        arguments_json=arguments_json, decision=decision,
                        matched_rule=matched_rule, denial_reason=denial_reason,
                        requested_at=requested_at, spec_digest=self.spec_digest,
                        approved_by=approved_by, result=result, completed_at=completed_at)
        return step, call

    def _tool_events(self, step: Step, call: ToolCall, now: datetime, *,
                     finished: bool) -> list[NewEvent]:
        """TOOL_CALL steps are told by their ToolCall events (not StepStarted/StepCompleted too)."""
        events = [self._event(EventType.TOOL_CALL_REQUESTED, call.requested_at, step.step_id,
                              toolCallId=call.tool_call_id, tool=call.tool_name,
                              decision=call.decision.value, matchedRule=call.matched_rule)]
        if call.decision is not ToolDecision.ALLOWED:
            events.append(self._event(EventType.TOOL_CALL_DENIED, now, step.step_id,
                                      toolCallId=call.tool_call_id, tool=call.tool_name,
                                      decision=call.decision.value, reason=call.denial_reason))
        elif finished:
            events.append(self._tool_completed(call, now))
        return events

    def _tool_completed(self, call: ToolCall, now: datetime) -> NewEvent:
        result = call.result
        return self._event(EventType.TOOL_CALL_COMPLETED, now, call.step_id,
                           toolCallId=call.tool_call_id, tool=call.tool_name,
                           ok=bool(result and result.ok),
                           exitCode=result.exit_code if result else None)


def _step_status(decision: ToolDecision, result: ToolResult | None) -> StepStatus:
    if decision is not ToolDecision.ALLOWED:
        return StepStatus.DENIED
    if result is not None and not result.ok and result.error == "timed out":
        return StepStatus.TIMED_OUT
    return StepStatus.SUCCEEDED if result is not None and result.ok else StepStatus.FAILED


def _failure_code(decision: ToolDecision, result: ToolResult | None) -> str | None:
    if decision is not ToolDecision.ALLOWED:
        return decision.value
    if result is None or result.ok:
        return None
    if result.exit_code is not None:
        return f"exit_{result.exit_code}"
    return "tool_error"


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
