"""The one writer of an attempt, on any store (the storage port): every write fenced by the
attempt's lease.

Each transaction first proves (compare-and-set on the attempt row) that this attempt still holds
the run's unexpired lease; a stale attempt's writes raise LeaseLost and change nothing.

Finished tool calls that only touched the workspace, and short steps with what they produced,
are batched: committed, in order, with the next write, or when the batch is full or old. A crash
can lose at most that batch, and the workspace those calls changed dies with the attempt, so no
unrecorded effect ever reaches a patch. A commit per call would cost a WAL commit each (~0.4 ms),
ten times the rows themselves, and with several workers every commit is a turn at the one write
lock. Long steps (a clone, a verifier command) are written when they start, so they can be watched.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from agentctl.domain import transitions
from agentctl.domain.artifact import Artifact
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.ending import AttemptEnd, LostLease
from agentctl.domain.enums import AttemptStatus, EventType, RunStatus, StepType
from agentctl.domain.errors import LeaseLost
from agentctl.domain.events import NewEvent
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.run import Run
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.domain.verification import VerificationReport
from agentctl.services.attempts.recording import AttemptEvents
from agentctl.services.lifecycle import runs
from agentctl.services.ports import (
    Blobs,
    CallRequest,
    Lease,
    NewArtifact,
    Produced,
    StepEnd,
)
from agentctl.services.unit_of_work import Pending, Repository

BATCH_CALLS = 2500  # each commit rewrites the tables' index pages: 1000 cost ~10% more (issue 9)
BATCH_SECONDS = 0.25  # what bounds how late a watcher sees a call, whatever the count


class ProducedWork(Protocol):
    """Where the records a step produced go."""

    @property
    def patches(self) -> Repository[Patch]: ...
    @property
    def verifications(self) -> Repository[VerificationReport]: ...
    @property
    def judgements(self) -> Repository[JudgeReport]: ...


class LedgerWork(runs.EndingWork, ProducedWork, Protocol):
    """What an attempt's writes do in a transaction: the fence first, the batch, the attempt's
    steps, calls, artifacts and produced records, the run's status, and its end (`runs.EndingWork`)."""

    @property
    def tool_calls(self) -> Repository[ToolCall]: ...
    @property
    def artifacts(self) -> Repository[Artifact]: ...
    def fence(self, attempt_id: str, lease_id: str, now: datetime) -> None: ...
    def write_pending(self, pending: Pending) -> None: ...
    def record_directory(self, attempt_id: str, directory: str) -> None: ...
    def run_status(self, run_id: str) -> RunStatus: ...
    def set_run_status(self, run_id: str, *, expected: RunStatus, target: RunStatus) -> None: ...


class LedgerStore(Protocol):
    """The part of the storage port an attempt's ledger uses (any `Storage` is one): no reads
    outside its fenced transactions, no claims, no sessions, approvals or pull requests."""

    @property
    def blobs(self) -> Blobs: ...
    def pending(self) -> Pending: ...
    def unit_of_work(self) -> AbstractContextManager[LedgerWork]: ...


@dataclass
class _Batch:
    """Inserts waiting for the next write, held by the store as it writes them (`Pending`);
    events in the order things happened. Produced records (rare) wait as they are."""

    rows: Pending
    calls: int = 0
    events: int = 0
    produced: list[Produced] = field(default_factory=list)
    since: float = 0.0

    def __bool__(self) -> bool:
        return self.events > 0

    def add(self, steps: Sequence[Step], events: Sequence[NewEvent], *,
            calls: Sequence[ToolCall] = (), artifacts: Sequence[Artifact] = (),
            produced: Sequence[Produced] = ()) -> None:
        rows = self.rows
        rows.add_steps(steps)
        if calls:
            rows.add_tool_calls(calls)
            self.calls += len(calls)
        if artifacts:
            rows.add_artifacts(artifacts)
        self.produced += produced
        rows.append_events(events)
        self.events += len(events)

    def add_call(self, step: Step, call: ToolCall, events: Sequence[NewEvent]) -> None:
        self.rows.add_call(step, call, events)
        self.calls += 1
        self.events += len(events)

    def store(self, uow: LedgerWork) -> None:
        uow.write_pending(self.rows)
        for record in self.produced:
            add_produced(uow, record)


def add_produced(uow: ProducedWork, record: Produced) -> None:
    match record:
        case Patch():
            uow.patches.add(record)
        case VerificationReport():
            uow.verifications.add(record)
        case JudgeReport():
            uow.judgements.add(record)


class Ledger:
    """The AttemptLedger: one attempt's writes, batched where a crash can lose nothing real."""

    def __init__(self, storage: LedgerStore, lease: Lease, *, spec_digest: str,
                 clock: Clock = utcnow, blobs: Blobs | None = None) -> None:
        self.storage = storage
        self.lease = lease
        self.spec_digest = spec_digest
        self.blobs = storage.blobs if blobs is None else blobs
        self._clock = clock
        self._records = AttemptEvents(lease, spec_digest)
        self._batch = _Batch(storage.pending())
        self._unwritten: set[str] = set()  # short steps whose start is not on record yet

    def now(self) -> datetime:
        return self._clock()

    @property
    def last_step_number(self) -> int:
        return self._records.last_sequence_number

    # --- plumbing ---------------------------------------------------------------------------
    @contextmanager
    def write(self) -> Iterator[LedgerWork]:
        """A fenced transaction for this attempt; what was batched lands first, in order."""
        with self.storage.unit_of_work() as uow:
            uow.fence(self.lease.attempt_id, self.lease.lease_id, self.now())
            self._batch.store(uow)
            yield uow
        self._batch = _Batch(self.storage.pending())

    def flush(self) -> None:
        """Commit what is batched now (before anything outside the workspace happens)."""
        if self._batch:
            with self.write():
                pass

    def _batched(self) -> _Batch:
        if not self._batch:
            self._batch.since = time.monotonic()
        return self._batch

    def _maybe_flush(self) -> None:
        batch = self._batch
        if batch.calls >= BATCH_CALLS or time.monotonic() - batch.since >= BATCH_SECONDS:
            self.flush()

    # --- run and attempt --------------------------------------------------------------------
    def activate(self, directory: str) -> Run:
        """The worker starts: attempt ACTIVE, run PREPARING_WORKSPACE, its directory on record
        (whoever finds the attempt dead removes it)."""
        now = self.now()
        with self.write() as uow:
            attempt = uow.attempts.get(self.lease.attempt_id)
            uow.attempts.save(attempt.with_status(AttemptStatus.ACTIVE, now),
                              expected_status=attempt.status)
            uow.record_directory(attempt.attempt_id, directory)
            run = uow.runs.get(self.lease.run_id)
            preparing = run.advanced(RunStatus.PREPARING_WORKSPACE, now)
            uow.runs.save(preparing, expected_status=run.status)
            uow.events.append(self._records.event(
                EventType.ATTEMPT_STARTED, now, attemptNumber=self.lease.attempt_number,
                workerId=self.lease.worker_id, runStatus=preparing.status.value,
                directory=directory))
        return preparing

    def advance(self, target: RunStatus, event: EventType, **payload: object) -> None:
        """Move the run along its working states (its end goes through `end`)."""
        now = self.now()
        with self.write() as uow:
            current = uow.run_status(self.lease.run_id)
            transitions.advance(current, target, f"run {self.lease.run_id}")
            uow.set_run_status(self.lease.run_id, expected=current, target=target)
            uow.events.append(self._records.event(event, now, runStatus=target.value, **payload))

    def end(self, end: AttemptEnd) -> Run | None:
        """The attempt's one end; None when the lease was lost (nothing of ours may land)."""
        if isinstance(end, LostLease):
            return None
        try:
            with self.write() as uow:
                return runs.conclude_attempt(uow, self.lease.run_id, end, self.now(),
                                             attempt_id=self.lease.attempt_id)
        except LeaseLost:
            return None

    # --- steps ------------------------------------------------------------------------------
    def begin_step(self, type_: StepType, title: str, *, live: bool) -> Step:
        """A step starts; a `live` one is on record at once, a short one when it ends."""
        step = self._records.step(type_, title, self.now())
        if not live:
            self._unwritten.add(step.step_id)
            return step
        with self.write() as uow:
            uow.steps.add(step)
            uow.events.append(self._records.started(step))
        return step

    def end_step(self, step: Step, end: StepEnd) -> list[Artifact]:
        """Finish a step with the artifacts and records it produced, and their events."""
        done, stored, events = self._records.finished(step, end, self.now())
        if step.step_id in self._unwritten:
            self._unwritten.discard(step.step_id)
            self._batched().add([done], [self._records.started(step), *events],
                                artifacts=stored, produced=end.produced)
            self._maybe_flush()
            return stored
        with self.write() as uow:
            uow.artifacts.add_many(stored)
            uow.steps.save(done, expected_status=step.status)
            for record in end.produced:
                add_produced(uow, record)
            uow.events.append_many(events)
        return stored

    # --- tool calls -------------------------------------------------------------------------
    def finished_call(self, request: CallRequest, result: ToolResult | None, *,
                      attributes: Mapping[str, object] | None = None) -> ToolCall:
        """A finished (or denied) workspace-only tool call, as one step; batched."""
        now = self.now()
        step, call = self._records.call(request, result, completed_at=now,
                                        attributes=attributes)
        self._batched().add_call(step, call, self._records.call_events(call, now, finished=True))
        self._maybe_flush()
        return call

    def begin_call(self, request: CallRequest) -> tuple[Step, ToolCall]:
        """An allowed call that may reach beyond the workspace is on record before it starts."""
        step, call = self._records.call(request)
        with self.write() as uow:
            uow.steps.add(step)
            uow.tool_calls.add(call)
            uow.events.append_many(self._records.call_events(call, request.requested_at,
                                                             finished=False))
        return step, call

    def end_call(self, step: Step, call: ToolCall, result: ToolResult,
                 artifacts: Sequence[NewArtifact] = (), *,
                 attributes: Mapping[str, object] | None = None) -> ToolCall:
        now = self.now()
        stored = [self._records.artifact(step, draft, now) for draft in artifacts]
        done, finished = self._records.call_ended(step, call, result, now, stored,
                                                  attributes=attributes)
        with self.write() as uow:
            uow.artifacts.add_many(stored)
            uow.steps.save(done, expected_status=step.status)
            uow.tool_calls.save(finished)
            uow.events.append(self._records.call_completed(finished, now, stored))
        return finished
