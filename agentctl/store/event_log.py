"""Appending to the hash-chained event log inside the caller's transaction.

Appended events wait in the unit of work, in their stored form but for the first (which may
still carry the transaction's seals), and are written when it commits (`flush_head`): then
the chain head's one row is locked (`SELECT ... FOR UPDATE`; on SQLite the transaction already
holds the write lock), the events numbered and hashed after it, and the head moved. With many
workers on PostgreSQL, appends are therefore in one total order and the chain has no gaps, and
because the head lock is the last lock a transaction takes, holding it never waits on another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import chain

from sqlalchemy import Connection, bindparam, select, update

from agentctl.domain.audit import SEALS
from agentctl.domain.errors import IllegalTransition
from agentctl.domain.events import GENESIS_HASH, NewEvent, StoredEvent, chain_hash, stored_form
from agentctl.store import tables
from agentctl.store.prebuilt import Prebuilt
from agentctl.store.table_repository import insert_rows

_EVENT = tables.event
_HEAD = tables.event_head
_LOCK_HEAD = Prebuilt(select(_HEAD.c.seq, _HEAD.c.hash).where(_HEAD.c.id == 1).with_for_update())
_MOVE_HEAD = Prebuilt(update(_HEAD).where(_HEAD.c.id == 1, _HEAD.c.seq == bindparam("old"))
                      .values(seq=bindparam("seq"), hash=bindparam("hash")))
_FIELDS = ("seq", "type", "task_id", "run_id", "attempt_id", "step_id", "payload", "created_at",
           "prev_hash", "hash")


class EventLog:
    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._first: NewEvent | None = None  # kept a record until `seal` is done with it
        self._pending: list[StoredEvent] = []  # the events after it
        self.appended: tuple[int, str] | None = None  # the head after this transaction's appends

    def append(self, *events: NewEvent) -> None:
        self.append_many(events)

    def append_many(self, events: Sequence[NewEvent]) -> None:
        self.append_stored(events[0] if events else None, list(map(stored_form, events[1:])))

    def append_stored(self, first: NewEvent | None, rest: Sequence[StoredEvent]) -> None:
        """Events already in their stored form (a batch held between transactions), after the
        record of the first of them."""
        if first is not None:
            if self._first is None:
                self._first = first
            else:
                self._pending.append(stored_form(first))
        self._pending.extend(rest)

    def seal(self, sealed: Mapping[str, Mapping[str, str]]) -> None:
        """Carry the seals of the rows this transaction wrote in its first event (so a new home's
        first event is sealed, which tells `audit verify` every row must be). Every state
        change appends an event; rows written with none stay unsealed, and `audit verify`
        reports them as written behind the log."""
        first = self._first
        if first is not None:
            self._first = replace(first, payload={**first.payload, SEALS: sealed})

    def flush_head(self) -> None:
        """Write the appended events after the locked head and move the head to the last."""
        first = [] if self._first is None else [stored_form(self._first)]
        if not (first or self._pending):
            return
        old_seq, prev_hash = self._lock_head()
        seq = old_seq
        rows = []
        for type_, task, run, attempt, step, payload_json, created_at in chain(first,
                                                                               self._pending):
            seq += 1
            digest = chain_hash(prev_hash, seq, type_, task, run, attempt, step, payload_json,
                                created_at)
            rows.append((seq, type_, task, run, attempt, step, payload_json, created_at,
                         prev_hash, digest))
            prev_hash = digest
        insert_rows(self._connection, _EVENT, _FIELDS, rows)
        result = _MOVE_HEAD.run(self._connection, {"old": old_seq, "seq": seq, "hash": prev_hash})
        if result.rowcount != 1:  # cannot happen while the row is locked: fail closed
            raise IllegalTransition("event log", str(old_seq), str(seq),
                                    "another writer appended concurrently")
        self._first = None
        self._pending.clear()
        self.appended = (seq, prev_hash)

    def _lock_head(self) -> tuple[int, str]:
        row = _LOCK_HEAD.run(self._connection, {}).first()
        if row is None:  # the first event ever: make the head row, whoever comes first
            # once per database: import late, and only the dialect in use (PostgreSQL's
            # alone costs a new SQLite home's first command ~20 ms)
            if self._connection.dialect.name == "postgresql":
                from sqlalchemy.dialects.postgresql import insert
            else:
                from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
            self._connection.execute(insert(_HEAD).values(id=1, seq=0, hash=GENESIS_HASH)
                                     .on_conflict_do_nothing())
            row = _LOCK_HEAD.run(self._connection, {}).first()
            assert row is not None
        return int(row[0]), str(row[1])
