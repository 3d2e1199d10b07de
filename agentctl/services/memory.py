"""An in-memory RunQueue and AttemptLedger: the same Protocols, domain rules and records as the
store, kept in dicts. For fast tests of the pipeline and the worker loop; the test suite runs
the same scenarios on it and on real SQLite and compares what each recorded.

Fencing is the domain's rule (`Attempt.holds_lease`) checked before every write, as the store's
compare-and-set does it; the event log is hash-chained as the store's is.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import weakref
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from agentctl.domain import ids
from agentctl.domain.artifact import Artifact
from agentctl.domain.clock import Clock, from_iso, utcnow
from agentctl.domain.ending import (
    Cancelled,
    Completed,
    InfraFailed,
    Situation,
    conclude,
    lease_expired,
    on_cancel_request,
)
from agentctl.domain.enums import (
    AttemptStatus,
    EventType,
    RunStatus,
    StepStatus,
    TaskStatus,
)
from agentctl.domain.errors import IllegalTransition, LeaseLost, NotFound
from agentctl.domain.events import GENESIS_HASH, Event, NewEvent, hash_new_event
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.run import Attempt, ExecutionSpec, Run, lease_acquired, lease_attempt
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.task import Task
from agentctl.domain.transitions import ACTIVE_RUN, TERMINAL_RUN, UNFINISHED_RUN
from agentctl.domain.verdict import Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.services.memory_ledger import MemoryLedger
from agentctl.services.memory_lock import Locked, locked
from agentctl.services.ports import (
    Heartbeat,
    Lease,
    Produced,
    RunRecord,
)
from agentctl.store.blobs import StoredBlob


class MemoryBlobs:
    """Content-addressed bytes; files to move in are staged in a private temporary folder."""

    def __init__(self) -> None:
        self.content: dict[str, bytes] = {}
        self._staging = Path(tempfile.mkdtemp(prefix="agentctl-memory-blobs-"))
        # gone with the fake (or at exit): a test suite must not leave one folder per store
        weakref.finalize(self, shutil.rmtree, self._staging, ignore_errors=True)

    def put_bytes(self, data: bytes) -> StoredBlob:
        digest = hashlib.sha256(data).hexdigest()
        self.content.setdefault(digest, data)
        return StoredBlob(digest, len(data), f"artifacts/sha256/{digest[:2]}/{digest}")

    def put_file(self, path: Path, *, move: bool = False) -> StoredBlob:
        blob = self.put_bytes(path.read_bytes())
        if move:
            path.unlink()
        return blob

    def staging_file(self) -> Path:
        return Path(tempfile.mkstemp(prefix=".staging-", dir=self._staging)[1])

    def read(self, uri: str) -> bytes:
        return self.content[uri.rsplit("/", 1)[-1]]


class MemoryRunQueue(Locked):
    def __init__(self, clock: Clock = utcnow) -> None:
        self.clock = clock
        self.lock = threading.RLock()  # the heartbeat thread writes beside the attempt
        self.blobs = MemoryBlobs()
        self.tasks: dict[str, Task] = {}
        self.runs: dict[str, Run] = {}
        self.attempts: dict[str, Attempt] = {}
        self.steps: dict[str, Step] = {}
        self.tool_calls: dict[str, ToolCall] = {}
        self.artifacts: dict[str, Artifact] = {}
        self.verdicts: dict[str, Verdict] = {}
        self.produced: list[Produced] = []
        self.events: list[Event] = []

    # --- what the store's use cases do before a run executes ---------------------------------
    @locked
    def create(self, task: Task, spec: ExecutionSpec) -> Run:
        """A QUEUED run of `task` under `spec` (create_run, without resolving the repository)."""
        now = self.clock()
        task.ensure_runnable()
        number = 1 + sum(1 for run in self.runs.values() if run.task_id == task.task_id)
        run = Run(run_id=ids.new_id("run"), task_id=task.task_id, number=number,
                  status=RunStatus.CREATED, execution_spec=spec, spec_digest=spec.digest(),
                  policy_decision={"allowed": True, "config": "memory"},
                  base_commit=spec.base_commit, budget=spec.budget, created_at=now)
        queued = run.advanced(RunStatus.QUEUED, now)
        self.runs[run.run_id] = queued
        if task.status is not TaskStatus.RUNNING:
            task = task.with_status(TaskStatus.RUNNING, now)
        self.tasks[task.task_id] = task
        self.append([
            NewEvent(type=EventType.RUN_CREATED, created_at=now, task_id=task.task_id,
                     run_id=run.run_id, payload={"number": number, "specDigest": run.spec_digest,
                                                 "agent": spec.agent}),
            NewEvent(type=EventType.RUN_QUEUED, created_at=now, task_id=task.task_id,
                     run_id=run.run_id, payload={"reason": "created"})])
        return queued

    @locked
    def cancel(self, run_id: str, *, by: str, reason: str) -> Run:
        now = self.clock()
        run = self.run(run_id)
        if run.status in TERMINAL_RUN:
            return run
        self.append([NewEvent(type=EventType.RUN_CANCELLED, created_at=now, task_id=run.task_id,
                              run_id=run_id, payload={"by": by, "reason": reason,
                                                      "phase": "requested",
                                                      "status": run.status.value})])
        run = self.runs[run_id] = replace(run, cancel_requested_by=by, cancel_reason=reason)
        attempt = self.attempts.get(run.active_attempt_id or "")
        end = on_cancel_request(run, attempt, by=by, reason=reason, now=now)
        if end is None:
            return run
        return self.conclude(run_id, end, now, attempt_id=attempt.attempt_id if attempt else None)

    # --- RunQueue ---------------------------------------------------------------------------
    def now(self) -> datetime:
        return self.clock()

    @locked
    def lease(self, *, worker_id: str, ttl_seconds: float,
              run_id: str | None = None) -> Lease | None:
        self.reap_expired()  # as the store's claim does: expired leases first
        now = self.clock()
        candidates = [run_id] if run_id else sorted(self.runs)
        for candidate in candidates:
            run = self.run(candidate)
            if run.status is not RunStatus.QUEUED or (run.not_before and run.not_before > now):
                continue
            number = 1 + sum(1 for a in self.attempts.values() if a.run_id == run.run_id)
            leased, attempt = lease_attempt(run, number=number, worker_id=worker_id,
                                            ttl_seconds=ttl_seconds, now=now)
            self.runs[run.run_id] = leased
            self.attempts[attempt.attempt_id] = attempt
            self.append([lease_acquired(leased, attempt)])
            return Lease(run.run_id, run.task_id, attempt.attempt_id, number, attempt.lease_id,
                         worker_id, ttl_seconds)
        return None

    @locked
    def heartbeat(self, lease: Lease) -> Heartbeat:
        now = self.clock()
        attempt = self.attempts[lease.attempt_id]
        if not attempt.holds_lease(lease.lease_id, now):
            raise LeaseLost(f"attempt {lease.attempt_id} lost its lease")
        self.attempts[lease.attempt_id] = replace(
            attempt, last_heartbeat_at=now,
            lease_expires_at=now + timedelta(seconds=lease.ttl_seconds))
        return Heartbeat(self.cancel_request(lease.run_id))

    @locked
    def reap_expired(self) -> list[Run]:
        now = self.clock()
        expired = [a for a in self.attempts.values()
                   if a.status in (AttemptStatus.STARTING, AttemptStatus.ACTIVE)
                   and a.lease_expires_at <= now]
        return [self.conclude(a.run_id, lease_expired(a), now, attempt_id=a.attempt_id)
                for a in expired]

    def run(self, run_id: str) -> Run:
        try:
            return self.runs[run_id]
        except KeyError:
            raise NotFound(f"no run {run_id}") from None

    def cancel_request(self, run_id: str) -> tuple[str, str] | None:
        run = self.run(run_id)
        if run.cancel_requested_by is None:
            return None
        return run.cancel_requested_by, run.cancel_reason or ""

    def waiting(self) -> bool:
        return any(run.status in (RunStatus.QUEUED, *ACTIVE_RUN) for run in self.runs.values())

    def ledger(self, lease: Lease, spec_digest: str) -> MemoryLedger:
        return MemoryLedger(self, lease, spec_digest)

    def record(self, run_id: str) -> RunRecord:
        return RunRecord(
            run=self.run(run_id),
            attempts=tuple(sorted((a for a in self.attempts.values() if a.run_id == run_id),
                                  key=lambda a: a.attempt_number)),
            steps=tuple(sorted((s for s in self.steps.values() if s.run_id == run_id),
                               key=lambda s: (s.attempt_id, s.sequence_number))),
            tool_calls=tuple(c for c in self.tool_calls.values() if c.run_id == run_id),
            artifacts=tuple(sorted((a for a in self.artifacts.values() if a.run_id == run_id),
                                   key=lambda a: a.artifact_id)),
            verdict=self.verdicts.get(run_id),
            patches=tuple(r for r in self.produced if isinstance(r, Patch) and r.run_id == run_id),
            verifications=tuple(r for r in self.produced
                                if isinstance(r, VerificationReport) and r.run_id == run_id),
            judgements=tuple(r for r in self.produced
                             if isinstance(r, JudgeReport) and r.run_id == run_id),
            events=tuple(e for e in self.events if e.run_id == run_id),
        )

    # --- writes -----------------------------------------------------------------------------
    def append(self, events: Sequence[NewEvent]) -> None:
        for event in events:
            seq = len(self.events) + 1
            prev = self.events[-1].hash if self.events else GENESIS_HASH
            payload, created, digest = hash_new_event(event, seq=seq, prev_hash=prev)
            self.events.append(Event(
                seq=seq, type=event.type, task_id=event.task_id, run_id=event.run_id,
                attempt_id=event.attempt_id, step_id=event.step_id, payload=dict(event.payload),
                created_at=from_iso(created) or event.created_at, prev_hash=prev, hash=digest))

    @locked
    def conclude(self, run_id: str, end: Completed | Cancelled | InfraFailed, now: datetime, *,
                 attempt_id: str | None = None) -> Run:
        """`runs.conclude_attempt`, on the dicts: the same rule, the same compare-and-sets."""
        run = self.run(run_id)
        attempt = self.attempts.get(attempt_id) if attempt_id else None
        situation = Situation(
            run=run, task=self.tasks[run.task_id], attempt=attempt,
            verdict=self.verdicts.get(run_id) if run.status is RunStatus.NEEDS_APPROVAL else None,
            open_steps=tuple(sorted((s for s in self.steps.values()
                                     if s.attempt_id == attempt_id
                                     and s.status is StepStatus.STARTED),
                                    key=lambda s: s.sequence_number)),
            other_unfinished_runs=sum(1 for r in self.runs.values()
                                      if r.task_id == run.task_id and r.run_id != run_id
                                      and r.status in UNFINISHED_RUN),
        )
        done = conclude(end, now, situation)
        if done.attempt is not None:
            self.attempts[done.attempt.attempt_id] = done.attempt
        for step in done.closed_steps:
            self.steps[step.step_id] = step
        if done.verdict is not None:
            if run_id in self.verdicts:
                raise IllegalTransition("run", run.status.value, "verdict", "has one already")
            self.verdicts[run_id] = done.verdict
        if done.run is not None:
            self.runs[run_id] = done.run
        if done.task is not None:
            self.tasks[done.task.task_id] = done.task
        self.append(done.events)
        return done.run or run
