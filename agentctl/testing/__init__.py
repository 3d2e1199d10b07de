"""The storage port in memory: a fake at the port, shipped, so the real use cases run on it.

`InMemoryStorage` implements `services.unit_of_work.Storage` with dicts: the run lifecycle
(`services.lifecycle.runs`), the attempt ledger (`services.lifecycle.ledger`) and the worker loop run on it
unchanged, for fast tests. It keeps the store's rules that the use cases rely on: a unit of work
lands whole or not at all (one at a time, as SQLite's write lock has it), `save` is a
compare-and-set on the status, `fence` is the domain's lease rule, unique columns stay unique,
and the event log is hash-chained. tests/contract runs the same tests on it, SQLite and
PostgreSQL.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import weakref
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from types import TracebackType

from agentctl.domain import id_prefixes
from agentctl.domain.artifact import Artifact
from agentctl.domain.audit import Checkpoint, CheckpointState
from agentctl.domain.audit_report import AuditReport
from agentctl.domain.enums import RunStatus, TaskStatus
from agentctl.domain.errors import IllegalTransition, LeaseLost
from agentctl.domain.events import GENESIS_HASH, ChainBreak, Event
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.domain.transitions import UNFINISHED_RUN
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.services.unit_of_work import IdKind, Pending
from agentctl.testing.reads import InMemoryReads
from agentctl.testing.tables import (
    LIVE_ATTEMPT,
    CommittedTable,
    MemoryBlobs,
    MemoryEvents,
    MemoryPending,
    MemoryRepository,
)

__all__ = ["InMemoryReads", "InMemoryStorage", "InMemoryUnitOfWork"]


class InMemoryStorage:
    """The storage port in dicts. One unit of work at a time, as SQLite writes."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # a heartbeat thread writes beside the attempt
        self.blobs = MemoryBlobs()
        self.events: list[Event] = []
        self.tasks: CommittedTable[Task] = CommittedTable("task", "task_id")
        self.sessions: CommittedTable[Session] = CommittedTable("session", "session_id")
        self.messages: CommittedTable[SessionMessage] = CommittedTable("message", "message_id")
        self.runs: CommittedTable[Run] = CommittedTable("run", "run_id", [("task_id", "number")])
        self.attempts: CommittedTable[Attempt] = CommittedTable("attempt", "attempt_id",
                                                [("run_id", "attempt_number")])
        self.steps: CommittedTable[Step] = CommittedTable("step", "step_id")
        self.tool_calls: CommittedTable[ToolCall] = CommittedTable("toolcall", "tool_call_id")
        self.artifacts: CommittedTable[Artifact] = CommittedTable("artifact", "artifact_id")
        self.patches: CommittedTable[Patch] = CommittedTable("patch", "patch_id")
        self.verifications: CommittedTable[VerificationReport] = CommittedTable("verification",
                                                                "verification_report_id")
        self.judgements: CommittedTable[JudgeReport] = CommittedTable("judge", "judge_report_id")
        self.verdicts: CommittedTable[Verdict] = CommittedTable("verdict", "verdict_id", [("run_id",)])
        self.approvals: CommittedTable[Approval] = CommittedTable("approval", "approval_id")
        self.pull_requests: CommittedTable[PullRequest] = CommittedTable("pr", "pr_id")
        self.attempt_directories: dict[str, str] = {}

        self.state_root = Path(tempfile.mkdtemp(prefix="agentctl-memory-home-"))
        weakref.finalize(self, shutil.rmtree, self.state_root, True)

    def unit_of_work(self) -> InMemoryUnitOfWork:
        return InMemoryUnitOfWork(self)

    def audit(self) -> AuditReport:
        """The chain's links (seq and prev_hash; nothing outside the code can edit a record
        here, so there is nothing else to catch). The fake keeps no signer: UNSIGNED."""
        with self.lock:
            events = list(self.events)
        breaks, prev = [], GENESIS_HASH
        for number, event in enumerate(events, start=1):
            if event.seq != number or event.prev_hash != prev:
                breaks.append(ChainBreak(event.seq, "prev_hash does not match the previous event"))
            prev = event.hash
        head = (events[-1].seq, events[-1].hash) if events else None
        return AuditReport(events=len(events), head=head, checkpoint=None,
                           checkpoint_state=CheckpointState.UNSIGNED if events
                           else CheckpointState.EMPTY, breaks=breaks)

    def checkpoint(self) -> Checkpoint | None:
        return None

    def pending(self) -> MemoryPending:
        return MemoryPending()

    def reads(self) -> InMemoryReads:
        return InMemoryReads(self)

    def outage_errors(self) -> tuple[type[BaseException], ...]:
        return ()  # dicts in memory are never away

    def outage_text(self, error: BaseException) -> str:
        return str(error)

    def resolve(self, kind: IdKind, text: str) -> str:
        prefix = id_prefixes.full_prefix(kind, text)
        table: CommittedTable[object] = getattr(self, f"{kind}s")
        with self.lock:
            return id_prefixes.pick_unique(kind, text, sorted(k for k in table.rows
                                                      if k.startswith(prefix))[:4])


class InMemoryUnitOfWork:
    """One transaction on an InMemoryStorage: its writes land when the block ends cleanly."""

    def __init__(self, storage: InMemoryStorage) -> None:
        self._storage = storage

    def __enter__(self) -> InMemoryUnitOfWork:
        storage = self._storage
        storage.lock.acquire()
        self.tasks = MemoryRepository(storage.tasks)
        self.sessions = MemoryRepository(storage.sessions)
        self.messages = MemoryRepository(storage.messages)
        self.runs = MemoryRepository(storage.runs)
        self.attempts = MemoryRepository(storage.attempts)
        self.steps = MemoryRepository(storage.steps)
        self.tool_calls = MemoryRepository(storage.tool_calls)
        self.artifacts = MemoryRepository(storage.artifacts)
        self.patches = MemoryRepository(storage.patches)
        self.verifications = MemoryRepository(storage.verifications)
        self.judgements = MemoryRepository(storage.judgements)
        self.verdicts = MemoryRepository(storage.verdicts)
        self.approvals = MemoryRepository(storage.approvals)
        self.pull_requests = MemoryRepository(storage.pull_requests)
        self.events = MemoryEvents(storage.events)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc_type is None:
                for repository in (self.tasks, self.sessions, self.messages, self.runs,
                                   self.attempts, self.steps, self.tool_calls, self.artifacts,
                                   self.patches, self.verifications, self.judgements,
                                   self.verdicts, self.approvals, self.pull_requests):
                    repository.commit()
                self.events.commit()
        finally:
            self._storage.lock.release()

    def write_pending(self, pending: Pending) -> None:
        if not isinstance(pending, MemoryPending):
            raise TypeError(f"{type(pending).__name__} holds writes for another store")
        self.steps.add_many(pending.steps)
        self.tool_calls.add_many(pending.tool_calls)
        self.artifacts.add_many(pending.artifacts)
        self.events.append_many(pending.events)

    def fence(self, attempt_id: str, lease_id: str, now: datetime) -> None:
        if not self.attempts.get(attempt_id).holds_lease(lease_id, now):
            raise LeaseLost(f"attempt {attempt_id} no longer holds lease {lease_id}; write refused")

    def extend_lease(self, attempt_id: str, lease_id: str, now: datetime, until: datetime) -> bool:
        attempt = self.attempts.get(attempt_id)
        if not attempt.holds_lease(lease_id, now):
            return False
        self.attempts.save(replace(attempt, last_heartbeat_at=now, lease_expires_at=until))
        return True

    def next_queued_run(self, now: datetime) -> Run | None:
        ready = sorted((run for run in self.runs.find(status=RunStatus.QUEUED)
                        if run.not_before is None or run.not_before <= now),
                       key=lambda run: run.run_id)
        return ready[0] if ready else None

    def expired_attempts(self, now: datetime, *, limit: int | None = None) -> list[Attempt]:
        expired = sorted((a for a in self.attempts.find()
                          if a.status in LIVE_ATTEMPT and a.lease_expires_at <= now),
                         key=lambda a: (a.lease_expires_at, a.attempt_id))
        return expired if limit is None else expired[:limit]

    def wake_workers(self) -> None:
        """Nothing waits on a notification here: workers poll."""

    def record_directory(self, attempt_id: str, directory: str) -> None:
        self._storage.attempt_directories[attempt_id] = directory

    def directories(self, attempt_ids: list[str]) -> list[str]:
        known = self._storage.attempt_directories
        return [known[attempt_id] for attempt_id in attempt_ids if attempt_id in known]

    def unfinished_runs(self, task_id: str, *, besides: str) -> int:
        return sum(1 for run in self.runs.find(task_id=task_id)
                   if run.run_id != besides and run.status in UNFINISHED_RUN)

    def run_status(self, run_id: str) -> RunStatus:
        return self.runs.get(run_id).status

    def task_status(self, task_id: str) -> TaskStatus:
        return self.tasks.get(task_id).status

    def set_run_status(self, run_id: str, *, expected: RunStatus, target: RunStatus) -> None:
        run = self.runs.get(run_id)
        if run.status is not expected:
            raise IllegalTransition("run", expected.value, target.value,
                                    f"{run_id} changed concurrently")
        self.runs.save(replace(run, status=target))

    def next_run_number(self, task_id: str) -> int:
        return 1 + max((run.number for run in self.runs.find(task_id=task_id)), default=0)
