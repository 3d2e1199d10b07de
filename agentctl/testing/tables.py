"""The fake's tables: committed records by key, a unit of work's view of them, its event log,
pending batch and blobs."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator, Sequence
from enum import Enum, StrEnum
from pathlib import Path
from typing import Generic, TypeVar

from agentctl.domain.artifact import Artifact
from agentctl.domain.blob import StoredBlob
from agentctl.domain.clock import from_iso
from agentctl.domain.enums import AttemptStatus
from agentctl.domain.errors import IllegalTransition, NotFound
from agentctl.domain.events import GENESIS_HASH, Event, NewEvent, hash_new_event
from agentctl.domain.step import Step, ToolCall

R = TypeVar("R")
T = TypeVar("T")
LIVE_ATTEMPT = (AttemptStatus.STARTING, AttemptStatus.ACTIVE)


def column_value(record: object, column: str) -> object:
    value = getattr(record, column)
    return value.value if isinstance(value, Enum) else value


class CommittedTable(Generic[R]):
    """The committed records of one type, by key, in insertion order (as rows come back)."""

    def __init__(self, kind: str, key: str, unique: Sequence[tuple[str, ...]] = ()) -> None:
        self.kind, self.key, self.unique = kind, key, unique
        self.rows: dict[str, R] = {}


class MemoryRepository(Generic[R]):
    """One unit of work's view of a table: its own writes over the committed records."""

    def __init__(self, table: CommittedTable[R]) -> None:
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
                mine = tuple(column_value(record, c) for c in columns)
                if any(tuple(column_value(other, c) for c in columns) == mine
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
                 if all(column_value(record, column) == value for column, value in wanted.items())]
        if order_by:
            found.sort(key=lambda record: getattr(record, order_by))
        return found

    def save(self, record: R, *, expected_status: StrEnum | None = None) -> None:
        identifier = str(getattr(record, self._table.key))
        current = self.get(identifier)
        if expected_status is not None and column_value(current, "status") != expected_status.value:
            raise IllegalTransition(self._table.kind, str(column_value(current, "status")),
                                    str(column_value(record, "status")),
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

    def add_call(self, step: Step, call: ToolCall, events: Sequence[NewEvent]) -> None:
        self.steps.append(step)
        self.tool_calls.append(call)
        self.events += events

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

    def put_written(self, write: Callable[[Path], T]) -> tuple[StoredBlob, T]:
        staging = self.staging_file()
        try:
            made = write(staging)
            return self.put_file(staging, move=True), made
        finally:
            staging.unlink(missing_ok=True)

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
