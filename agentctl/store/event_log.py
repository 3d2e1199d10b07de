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
from typing import TYPE_CHECKING

from agentctl.domain.audit import SEALS
from agentctl.domain.errors import IllegalTransition
from agentctl.domain.events import NewEvent, StoredEvent, chain_hash, stored_form
from agentctl.store.prebuilt import run_named
from agentctl.store.table_repository import insert_rows

if TYPE_CHECKING:
    from agentctl.store.transactions import Transaction

_FIELDS = ("seq", "type", "task_id", "run_id", "attempt_id", "step_id", "payload", "created_at",
           "prev_hash", "hash")


class EventLog:
    def __init__(self, transaction: Transaction) -> None:
        self._transaction = transaction
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
        insert_rows(self._transaction, "event", _FIELDS, rows)
        result = run_named(self._transaction, "head:move",
                           {"old": old_seq, "seq": seq, "hash": prev_hash})
        if result.rowcount != 1:  # cannot happen while the row is locked: fail closed
            raise IllegalTransition("event log", str(old_seq), str(seq),
                                    "another writer appended concurrently")
        self._first = None
        self._pending.clear()
        self.appended = (seq, prev_hash)

    def _lock_head(self) -> tuple[int, str]:
        row = run_named(self._transaction, "head:lock", {}).first()
        if row is None:  # the first event ever: make the head row, whoever comes first
            run_named(self._transaction, "head:create", {})
            row = run_named(self._transaction, "head:lock", {}).first()
            assert row is not None
        return int(row[0]), str(row[1])
