"""The memory fake's AttemptLedger, apart from its RunQueue so that each module has one job:
the queue leases and concludes runs, a ledger writes one attempt's records under its lease."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from agentctl.domain import transitions
from agentctl.domain.artifact import Artifact
from agentctl.domain.ending import AttemptEnd, LostLease
from agentctl.domain.enums import AttemptStatus, EventType, RunStatus, StepType
from agentctl.domain.errors import LeaseLost
from agentctl.domain.run import Run
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.services.memory_lock import Locked, locked
from agentctl.services.ports import CallRequest, Lease, NewArtifact, StepEnd
from agentctl.services.recording import AttemptEvents

if TYPE_CHECKING:
    from agentctl.services.memory import MemoryRunQueue


class MemoryLedger(Locked):
    """The AttemptLedger on a MemoryRunQueue: every write checks the lease first."""

    def __init__(self, queue: MemoryRunQueue, lease: Lease, spec_digest: str) -> None:
        self.queue = queue
        self.lease = lease
        self.spec_digest = spec_digest
        self.blobs = queue.blobs
        self.lock = queue.lock
        self._records = AttemptEvents(lease, spec_digest)

    def now(self) -> datetime:
        return self.queue.clock()

    def _fence(self) -> None:
        attempt = self.queue.attempts[self.lease.attempt_id]
        attempt.ensure_may_write(self.lease.lease_id, self.now())

    def flush(self) -> None:
        """Nothing is batched here."""

    @locked
    def activate(self, directory: str) -> Run:
        """As the store's; the in-memory queue has no leftovers to sweep, so `directory` only
        reaches the event."""
        self._fence()
        now = self.now()
        queue = self.queue
        attempt = queue.attempts[self.lease.attempt_id]
        queue.attempts[attempt.attempt_id] = attempt.with_status(AttemptStatus.ACTIVE, now)
        run = queue.runs[self.lease.run_id] = queue.run(self.lease.run_id).advanced(
            RunStatus.PREPARING_WORKSPACE, now)
        queue.append([self._records.event(
            EventType.ATTEMPT_STARTED, now, attemptNumber=self.lease.attempt_number,
            workerId=self.lease.worker_id, runStatus=run.status.value, directory=directory)])
        return run

    @locked
    def advance(self, target: RunStatus, event: EventType, **payload: object) -> None:
        self._fence()
        run = self.queue.run(self.lease.run_id)
        transitions.advance(run.status, target, f"run {run.run_id}")
        self.queue.runs[run.run_id] = replace(run, status=target)
        self.queue.append([self._records.event(event, self.now(), runStatus=target.value,
                                               **payload)])

    @locked
    def end(self, end: AttemptEnd) -> Run | None:
        if isinstance(end, LostLease):
            return None
        try:
            self._fence()
        except LeaseLost:
            return None
        return self.queue.conclude(self.lease.run_id, end, self.now(),
                                   attempt_id=self.lease.attempt_id)

    @locked
    def begin_step(self, type_: StepType, title: str, *, live: bool) -> Step:
        step = self._records.step(type_, title, self.now())
        if live:
            self._fence()
            self.queue.steps[step.step_id] = step
            self.queue.append([self._records.started(step)])
        return step

    @locked
    def end_step(self, step: Step, end: StepEnd) -> list[Artifact]:
        self._fence()
        done, stored, events = self._records.finished(step, end, self.now())
        live = step.step_id in self.queue.steps
        self.queue.steps[step.step_id] = done
        self._store(stored)
        self.queue.produced += end.produced
        self.queue.append(events if live else [self._records.started(step), *events])
        return stored

    @locked
    def finished_call(self, request: CallRequest, result: ToolResult | None, *,
                      attributes: Mapping[str, object] | None = None) -> ToolCall:
        self._fence()
        now = self.now()
        step, call = self._records.call(request, result, completed_at=now,
                                        attributes=attributes)
        self.queue.steps[step.step_id] = step
        self.queue.tool_calls[call.tool_call_id] = call
        self.queue.append(self._records.call_events(call, now, finished=True))
        return call

    @locked
    def begin_call(self, request: CallRequest) -> tuple[Step, ToolCall]:
        self._fence()
        step, call = self._records.call(request)
        self.queue.steps[step.step_id] = step
        self.queue.tool_calls[call.tool_call_id] = call
        self.queue.append(self._records.call_events(call, request.requested_at, finished=False))
        return step, call

    @locked
    def end_call(self, step: Step, call: ToolCall, result: ToolResult,
                 artifacts: Sequence[NewArtifact] = (), *,
                 attributes: Mapping[str, object] | None = None) -> ToolCall:
        self._fence()
        now = self.now()
        stored = [self._records.artifact(step, draft, now) for draft in artifacts]
        done, finished = self._records.call_ended(step, call, result, now, stored,
                                                  attributes=attributes)
        self.queue.steps[step.step_id] = done
        self.queue.tool_calls[call.tool_call_id] = finished
        self._store(stored)
        self.queue.append([self._records.call_completed(finished, now, stored)])
        return finished

    def _store(self, artifacts: list[Artifact]) -> None:
        for artifact in artifacts:
            self.queue.artifacts[artifact.artifact_id] = artifact
