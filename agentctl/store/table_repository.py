"""Repository over one table: add, get, find, and compare-and-set updates of changed columns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Generic, TypeVar

from agentctl.domain.errors import IllegalTransition, NotFound
from agentctl.store import prebuilt
from agentctl.store.rows import RowMapping, RowValues, Value
from agentctl.store.seals import inserted
from agentctl.store.table_shapes import TableShape

if TYPE_CHECKING:
    from agentctl.store.transactions import Transaction

R = TypeVar("R")


def insert_rows(transaction: Transaction, table: str, fields: tuple[str, ...],
                rows: Sequence[tuple[object, ...]]) -> None:
    """One driver-level executemany of `rows` (values in `fields` order): the hot path of a
    busy agent."""
    if rows:
        prebuilt.run_many(transaction, prebuilt.named(f"insert:{table}", transaction.dialect),
                          fields, rows)


class Repository(Generic[R]):
    """Rows of one record type inside the unit of work's transaction.

    The rows it read are kept, so `save` writes only the columns that changed: a status change
    does not rewrite a run's spec, and two writers touching different columns do not undo each
    other's work.
    """

    def __init__(self, transaction: Transaction, table: TableShape, mapping: RowMapping[R],
                 touched: set[str] | None = None, sealed: dict[str, str] | None = None) -> None:
        self._transaction = transaction
        self._dialect = transaction.dialect
        self._table = table
        self._mapping = mapping
        self._loaded: dict[str, RowValues] = {}
        self._touched = set() if touched is None else touched  # ids updated: read back, sealed
        self._sealed = {} if sealed is None else sealed  # id -> seal of the rows inserted

    def add(self, record: R) -> None:
        self.add_many([record])

    def add_many(self, records: Sequence[R]) -> None:
        """Many rows in one driver-level executemany."""
        if not records:
            return
        names = prebuilt.named(f"insert:{self._table.name}", self._dialect).order or \
            self._table.columns
        to_values = self._mapping.to_values(names, self._table.defaults)
        self.add_rows(names, [to_values(record) for record in records])

    def add_rows(self, fields: tuple[str, ...], rows: Sequence[tuple[Value, ...]]) -> None:
        """Rows already encoded (their values in `fields` order), inserted and sealed as
        `add_many` does records."""
        insert_rows(self._transaction, self._table.name, fields, rows)
        self._sealed.update(map(inserted(self._table.name, fields), rows))

    def get(self, identifier: str) -> R:
        rows = prebuilt.run_named(self._transaction, f"get:{self._table.name}",
                                  {"key": identifier}).mappings()
        if not rows:
            raise NotFound(f"no {self._mapping.kind} {identifier}")
        return self._remember(rows[0])

    def find(self, order_by: str | None = None, *, status: StrEnum | None = None,
             **equals: str | int) -> list[R]:
        names = tuple(sorted(equals)) + (("status",) if status is not None else ())
        params: dict[str, object] = dict(equals)
        if status is not None:
            params["status"] = status.value
        statement = prebuilt.matching(self._table.name, self._dialect, names, order_by)
        return [self._remember(row)
                for row in prebuilt.run(self._transaction, statement, params).mappings()]

    def claim(self, query: prebuilt.Compiled, params: Mapping[str, object]) -> list[R]:
        """The rows of `query` (a SELECT of this table made FOR UPDATE SKIP LOCKED), locked for
        this transaction; rows that another transaction holds are skipped, not waited for
        (PostgreSQL; SQLite's write transaction already keeps every other writer out)."""
        return [self._remember(row)
                for row in prebuilt.run(self._transaction, query, params).mappings()]

    def _remember(self, row: RowValues) -> R:
        """The record of `row`, keeping the row as stored: what `save` compares against (not
        the record encoded again, which would cost a run's whole spec per read)."""
        self._loaded[str(row[self._mapping.key])] = row
        return self._mapping.from_row(row)

    def save(self, record: R, *, expected_status: StrEnum | None = None) -> None:
        """Write the columns of `record` that differ from the row as read (all of them when it
        was not read here); with `expected_status`, only if the row still has that status.

        The compare-and-set repeats the transition rule in the database, so two processes that
        both think they may move a record cannot both succeed.
        """
        row = self._mapping.to_row(record)
        identifier = str(row[self._mapping.key])
        before = self._loaded.get(identifier)
        changed = {name: value for name, value in row.items()
                   if name != self._mapping.key and (before is None or before.get(name) != value)}
        statement = prebuilt.update(self._table.name, self._dialect, tuple(changed),
                                    expected_status is not None)
        params: dict[str, object] = {f"set_{name}": value for name, value in changed.items()}
        params["key"] = identifier
        if expected_status is not None:
            params["expected"] = expected_status.value
        result = prebuilt.run(self._transaction, statement, params)
        if result.rowcount != 1:
            current = prebuilt.run_named(self._transaction, f"status:{self._table.name}",
                                         {"key": identifier}).scalar()
            if current is None:
                raise NotFound(f"no {self._mapping.kind} {identifier}")
            raise IllegalTransition(self._mapping.kind, str(current), str(row.get("status")),
                                    f"{identifier} changed concurrently "
                                    f"(expected {expected_status})")
        self._loaded[identifier] = row
        self._touched.add(identifier)
