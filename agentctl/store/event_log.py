"""Appending to the hash-chained event log inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, insert, select, update

from agentctl.domain.errors import IllegalTransition
from agentctl.domain.events import GENESIS_HASH, NewEvent, hash_new_event
from agentctl.store.repository import insert_rows
from agentctl.store.tables import EventHeadRow, EventRow

_EVENT = EventRow.__table__
_HEAD = EventHeadRow.__table__
_FIELDS = ("seq", "type", "task_id", "run_id", "attempt_id", "step_id", "payload", "created_at",
           "prev_hash", "hash")


class EventLog:
    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._head: tuple[int, str] | None = None
        self._head_stored: tuple[int, str] | None = None
        self.appended: tuple[int, str] | None = None  # the head after this transaction's appends

    def append(self, *events: NewEvent) -> None:
        self.append_many(events)

    def append_many(self, events: Sequence[NewEvent]) -> None:
        if not events:
            return
        seq, prev_hash = self._read_head()
        rows = []
        for event in events:
            seq += 1
            payload_json, created_at, digest = hash_new_event(event, seq=seq, prev_hash=prev_hash)
            rows.append((seq, event.type.value, event.task_id, event.run_id, event.attempt_id,
                         event.step_id, payload_json, created_at, prev_hash, digest))
            prev_hash = digest
        insert_rows(self._connection, _EVENT, _FIELDS, rows)
        self._head = self.appended = (seq, prev_hash)

    def flush_head(self) -> None:
        """Move the stored head to the last appended event (compare-and-set on the old head)."""
        if self._head is None or self._head == self._head_stored:
            return
        if self._head_stored is None or self._head_stored[0] == 0:
            exists = self._connection.execute(select(_HEAD.c.id)).first()
            if exists is None:
                self._connection.execute(insert(_HEAD), [{"id": 1, "seq": self._head[0],
                                                          "hash": self._head[1]}])
                self._head_stored = self._head
                return
        old_seq = self._head_stored[0] if self._head_stored else 0
        result = self._connection.execute(
            update(_HEAD).where(_HEAD.c.id == 1, _HEAD.c.seq == old_seq)
            .values(seq=self._head[0], hash=self._head[1])
        )
        if result.rowcount != 1:
            raise IllegalTransition("event log", str(old_seq), str(self._head[0]),
                                    "another writer appended concurrently")
        self._head_stored = self._head

    def _read_head(self) -> tuple[int, str]:
        if self._head is None:
            row = self._connection.execute(select(_HEAD.c.seq, _HEAD.c.hash)).first()
            self._head = (row[0], row[1]) if row else (0, GENESIS_HASH)
            self._head_stored = self._head
        return self._head
