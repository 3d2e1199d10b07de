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

import hashlib
import json
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from enum import Enum, StrEnum
from pathlib import Path
from types import TracebackType
from typing import Generic, TypeVar

from agentctl.domain.artifact import Artifact
from agentctl.domain.audit import Checkpoint, CheckpointState
from agentctl.domain.audit_report import AuditReport
from agentctl.domain.blob import StoredBlob
from agentctl.domain.clock import from_iso, to_iso
from agentctl.domain.enums import AttemptStatus, RunStatus, TaskStatus
from agentctl.domain.errors import IllegalTransition, LeaseLost, NotFound
from agentctl.domain.events import GENESIS_HASH, ChainBreak, Event, NewEvent, hash_new_event
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Attempt, Run
from agentctl.domain.serialize import to_json
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.domain.transitions import ACTIVE_RUN, UNFINISHED_RUN
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.services.ports import RunRecord
from agentctl.services.queries.read_models import CallRow, StepRow
from agentctl.services.unit_of_work import IdKind, Pending
from agentctl.store import ids

R = TypeVar("R")
_LIVE = (AttemptStatus.STARTING, AttemptStatus.ACTIVE)


def _value(record: object, column: str) -> object:
    value = getattr(record, column)
    return value.value if isinstance(value, Enum) else value


class _Table(Generic[R]):
    """The committed records of one type, by key, in insertion order (as rows come back)."""

    def __init__(self, kind: str, key: str, unique: Sequence[tuple[str, ...]] = ()) -> None:
        self.kind, self.key, self.unique = kind, key, unique
        self.rows: dict[str, R] = {}


class MemoryRepository(Generic[R]):
    """One unit of work's view of a table: its own writes over the committed records."""

    def __init__(self, table: _Table[R]) -> None:
        self._table = table
        self._pending: dict[str, R] = {}

    def _all(self) -> dict[str, R]:
        return {**self._table.rows, **self._pending}

    def add(self, record: R) -> None:
        self.add_many([record])

    def add_many(self, records: Sequence[R]) -> None:
        rows = self._all()
        for record in records:
            identifier = str(getattr(record, self._table.key))
            if identifier in rows:
                raise IllegalTransition(self._table.kind, "stored", "added",
                                        f"{identifier} exists already")
            for columns in self._table.unique:
                mine = tuple(_value(record, c) for c in columns)
                if any(tuple(_value(other, c) for c in columns) == mine
                       for other in rows.values()):
                    raise IllegalTransition(self._table.kind, "stored", "added",
                                            f"{', '.join(columns)} {mine} exists already")
            rows[identifier] = self._pending[identifier] = record

    def get(self, identifier: str) -> R:
        found = self._pending.get(identifier) or self._table.rows.get(identifier)
        if found is None:
            raise NotFound(f"no {self._table.kind} {identifier}")
        return found

    def find(self, order_by: str | None = None, *, status: StrEnum | None = None,
             **equals: str | int) -> list[R]:
        wanted: dict[str, object] = {**equals, **({} if status is None else
                                                  {"status": status.value})}
        found = [record for record in self._all().values()
                 if all(_value(record, column) == value for column, value in wanted.items())]
        if order_by:
            found.sort(key=lambda record: getattr(record, order_by))
        return found

    def save(self, record: R, *, expected_status: StrEnum | None = None) -> None:
        identifier = str(getattr(record, self._table.key))
        current = self.get(identifier)
        if expected_status is not None and _value(current, "status") != expected_status.value:
            raise IllegalTransition(self._table.kind, str(_value(current, "status")),
                                    str(_value(record, "status")),
                                    f"{identifier} changed concurrently "
                                    f"(expected {expected_status})")
        self._pending[identifier] = record

    def commit(self) -> None:
        self._table.rows.update(self._pending)


class MemoryEvents:
    """Appended events wait for the commit, then are numbered and hash-chained."""

    def __init__(self, log: list[Event]) -> None:
        self._log = log
        self._pending: list[NewEvent] = []

    def append(self, *events: NewEvent) -> None:
        self.append_many(events)

    def append_many(self, events: Sequence[NewEvent]) -> None:
        self._pending.extend(events)

    def commit(self) -> None:
        for event in self._pending:
            seq = len(self._log) + 1
            prev = self._log[-1].hash if self._log else GENESIS_HASH
            payload, created, digest = hash_new_event(event, seq=seq, prev_hash=prev)
            self._log.append(Event(
                seq=seq, type=event.type, task_id=event.task_id, run_id=event.run_id,
                attempt_id=event.attempt_id, step_id=event.step_id, payload=dict(event.payload),
                created_at=from_iso(created) or event.created_at, prev_hash=prev, hash=digest))


class MemoryPending:
    """Inserts held for a later unit of work: the records themselves, in order."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.tool_calls: list[ToolCall] = []
        self.artifacts: list[Artifact] = []
        self.events: list[NewEvent] = []

    def add_steps(self, steps: Sequence[Step]) -> None:
        self.steps += steps

    def add_tool_calls(self, calls: Sequence[ToolCall]) -> None:
        self.tool_calls += calls

    def add_artifacts(self, artifacts: Sequence[Artifact]) -> None:
        self.artifacts += artifacts

    def append_events(self, events: Sequence[NewEvent]) -> None:
        self.events += events


class MemoryBlobs:
    """Content-addressed bytes; files to move in are staged in a private temporary folder."""

    def __init__(self) -> None:
        self.content: dict[str, bytes] = {}
        self._staging = Path(tempfile.mkdtemp(prefix="agentctl-memory-blobs-"))
        # Dropped with the fake: a test suite must not leave a folder per store behind.
        weakref.finalize(self, shutil.rmtree, self._staging, True)

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

    def open_chunks(self, uri: str) -> Iterator[bytes]:
        yield self.read(uri)

    def path_for(self, uri: str) -> Path:
        """A copy in the staging folder: the bytes live in memory."""
        path = self.staging_file()
        path.write_bytes(self.read(uri))
        return path

    def verify(self, uri: str, sha256: str) -> str | None:
        data = self.content.get(uri.rsplit("/", 1)[-1])
        if data is None:
            return "file is missing"
        actual = hashlib.sha256(data).hexdigest()
        return None if actual == sha256 else f"content hashes to {actual[:12]}, not {sha256[:12]}"


class InMemoryStorage:
    """The storage port in dicts. One unit of work at a time, as SQLite writes."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # a heartbeat thread writes beside the attempt
        self.blobs = MemoryBlobs()
        self.events: list[Event] = []
        self.tasks: _Table[Task] = _Table("task", "task_id")
        self.sessions: _Table[Session] = _Table("session", "session_id")
        self.messages: _Table[SessionMessage] = _Table("message", "message_id")
        self.runs: _Table[Run] = _Table("run", "run_id", [("task_id", "number")])
        self.attempts: _Table[Attempt] = _Table("attempt", "attempt_id",
                                                [("run_id", "attempt_number")])
        self.steps: _Table[Step] = _Table("step", "step_id")
        self.tool_calls: _Table[ToolCall] = _Table("toolcall", "tool_call_id")
        self.artifacts: _Table[Artifact] = _Table("artifact", "artifact_id")
        self.patches: _Table[Patch] = _Table("patch", "patch_id")
        self.verifications: _Table[VerificationReport] = _Table("verification",
                                                                "verification_report_id")
        self.judgements: _Table[JudgeReport] = _Table("judge", "judge_report_id")
        self.verdicts: _Table[Verdict] = _Table("verdict", "verdict_id", [("run_id",)])
        self.approvals: _Table[Approval] = _Table("approval", "approval_id")
        self.pull_requests: _Table[PullRequest] = _Table("pr", "pr_id")
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
        prefix = ids.full_prefix(kind, text)
        table: _Table[object] = getattr(self, f"{kind}s")
        with self.lock:
            return ids.pick_unique(kind, text, sorted(k for k in table.rows
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
                          if a.status in _LIVE and a.lease_expires_at <= now),
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


class InMemoryReads:
    """Reads of what was committed."""

    def __init__(self, storage: InMemoryStorage) -> None:
        self._storage = storage

    def __enter__(self) -> InMemoryReads:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def _where(self, table: _Table[R], run_id: str, order: Callable[[R], object] | None = None,
               ) -> tuple[R, ...]:
        with self._storage.lock:
            found: Iterable[R] = [r for r in table.rows.values()
                                  if _value(r, "run_id") == run_id]
        return tuple(sorted(found, key=order) if order else found)  # type: ignore[arg-type]

    def task(self, text: str) -> Task:
        return self._storage.tasks.rows[self._storage.resolve("task", text)]

    def run(self, text: str | None) -> Run:
        runs = self._storage.runs.rows
        if text is None:
            if not runs:
                raise NotFound("there are no runs yet; start one with 'agentctl run start TASK'")
            return runs[max(runs)]
        return runs[self._storage.resolve("run", text)]

    def cancel_request(self, run_id: str) -> tuple[str, str] | None:
        run = self.run(run_id)
        if run.cancel_requested_by is None:
            return None
        return run.cancel_requested_by, run.cancel_reason or ""

    def waiting(self) -> bool:
        with self._storage.lock:
            return any(run.status in (RunStatus.QUEUED, *ACTIVE_RUN)
                       for run in self._storage.runs.rows.values())

    def pull_requests(self, run_id: str) -> list[PullRequest]:
        return sorted(self._where(self._storage.pull_requests, run_id), key=lambda pr: pr.pr_id)

    def approvals(self, run_id: str) -> list[Approval]:
        return sorted(self._where(self._storage.approvals, run_id), key=lambda a: a.approval_id)

    def attempts(self, run_id: str) -> list[Attempt]:
        return list(self._where(self._storage.attempts, run_id, lambda a: a.attempt_number))

    def steps(self, run_id: str) -> list[Step]:
        return list(self._where(self._storage.steps, run_id,
                                lambda s: (s.attempt_id, s.sequence_number)))

    def tool_calls(self, run_id: str) -> list[ToolCall]:
        return list(self._where(self._storage.tool_calls, run_id))

    def artifacts(self, run_id: str) -> list[Artifact]:
        return list(self._where(self._storage.artifacts, run_id, lambda a: a.artifact_id))

    def verdict(self, run_id: str) -> Verdict | None:
        found = self._where(self._storage.verdicts, run_id)
        return found[-1] if found else None

    def patch(self, run_id: str) -> Patch | None:
        found = self._where(self._storage.patches, run_id, lambda p: p.patch_id)
        return found[-1] if found else None

    def verification(self, run_id: str) -> VerificationReport | None:
        found = self._where(self._storage.verifications, run_id,
                            lambda v: v.verification_report_id)
        return found[-1] if found else None

    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]:
        with self._storage.lock:
            found = self._storage.artifacts.rows
            return {one: found[one] for one in artifact_ids if one in found}

    def step_tree_rows(self, run_id: str) -> list[StepRow]:
        """The records in their stored form, as the store would give the columns."""
        return [StepRow(step.step_id, step.attempt_id, step.sequence_number, step.type.value,
                        step.status.value, step.title, to_iso(step.started_at),
                        to_iso(step.ended_at), step.failure_code,
                        json.dumps(dict(step.attributes), separators=(",", ":"),
                                   ensure_ascii=False))
                for step in self.steps(run_id)]

    def call_tree_rows(self, run_id: str) -> list[CallRow]:
        return [CallRow(call.step_id, call.tool_call_id, call.tool_name, call.arguments_json,
                        call.decision.value, call.matched_rule, call.denial_reason,
                        None if call.result is None else json.dumps(to_json(call.result)),
                        call.approved_by, to_iso(call.requested_at), to_iso(call.completed_at),
                        call.spec_digest)
                for call in self.tool_calls(run_id)]

    def event_head(self) -> tuple[int, str] | None:
        with self._storage.lock:
            last = self._storage.events[-1] if self._storage.events else None
        return None if last is None else (last.seq, last.hash)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """No unit of work lands while it is held."""
        with self._storage.lock:
            yield

    def lease_due(self, now: datetime) -> bool:
        with self._storage.lock:
            return any(a.status in _LIVE and a.lease_expires_at <= now
                       for a in self._storage.attempts.rows.values())

    def ended_attempt_directories(self, directories: Sequence[str]) -> list[str]:
        storage = self._storage
        with storage.lock:
            ended = {directory for attempt_id, directory in storage.attempt_directories.items()
                     if storage.attempts.rows[attempt_id].status not in _LIVE}
        return [directory for directory in directories if directory in ended]

    def record(self, run_id: str) -> RunRecord:
        storage = self._storage
        return RunRecord(
            run=self.run(run_id), attempts=tuple(self.attempts(run_id)),
            steps=tuple(self.steps(run_id)), tool_calls=tuple(self.tool_calls(run_id)),
            artifacts=tuple(self.artifacts(run_id)), verdict=self.verdict(run_id),
            patches=self._where(storage.patches, run_id, lambda p: p.patch_id),
            verifications=self._where(storage.verifications, run_id,
                                      lambda v: v.verification_report_id),
            judgements=self._where(storage.judgements, run_id, lambda j: j.judge_report_id),
            events=tuple(e for e in storage.events if e.run_id == run_id),
        )
