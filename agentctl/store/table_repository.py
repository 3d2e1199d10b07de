"""Repository over one table: add, get, find, and compare-and-set updates of changed columns."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from functools import lru_cache
from typing import Any, Generic, TypeVar, cast

from sqlalchemy import Connection, Dialect, Select, Table, insert, select, update

from agentctl.domain.errors import IllegalTransition, NotFound
from agentctl.store.rows import Row, RowMapping, RowValues, Value
from agentctl.store.seals import inserted

R = TypeVar("R")


def insert_rows(connection: Connection, table: Table, fields: tuple[str, ...],
                rows: Sequence[tuple[object, ...]]) -> None:
    """One driver-level executemany of `rows` (values in `fields` order), skipping the ORM's
    per-row parameter processing: the hot path of a busy agent."""
    if not rows:
        return
    sql, names, positional = _insert_statement(table, connection.dialect)
    if positional and names == fields:
        connection.exec_driver_sql(sql, list(rows))
        return
    if positional:
        order = [fields.index(name) for name in names]
        connection.exec_driver_sql(sql, [tuple(row[i] for i in order) for row in rows])
        return
    connection.exec_driver_sql(sql, [dict(zip(fields, row, strict=True)) for row in rows])


@lru_cache(maxsize=64)
def _insert_statement(table: Table, dialect: Dialect) -> tuple[str, tuple[str, ...], bool]:
    """The INSERT compiled once for this dialect, and the order its parameters come in."""
    compiled = insert(table).compile(dialect=dialect)
    names = tuple(compiled.positiontup or ()) if compiled.positional else \
        tuple(column.name for column in table.columns)
    return str(compiled), names, bool(compiled.positional)


@lru_cache(maxsize=64)
def defaults(table: Table) -> dict[str, Value]:
    """The value of each column a record does not carry (e.g. `attempt.fenced_writes`)."""
    return {column.name: cast(Value, getattr(column.default, "arg", None))
            for column in table.columns}


class Repository(Generic[R]):
    """Rows of one record type inside the unit of work's transaction.

    The rows it read are kept, so `save` writes only the columns that changed: a status change
    does not rewrite a run's spec, and two writers touching different columns do not undo each
    other's work.
    """

    def __init__(self, connection: Connection, table: Table, mapping: RowMapping[R],
                 touched: set[str] | None = None, sealed: dict[str, str] | None = None) -> None:
        self._connection = connection
        self._table = table
        self._mapping = mapping
        self._key = table.c[mapping.key]
        self._loaded: dict[str, RowValues] = {}
        self._touched = set() if touched is None else touched  # ids updated: read back, sealed
        self._sealed = {} if sealed is None else sealed  # id -> seal of the rows inserted

    def add(self, record: R) -> None:
        self.add_many([record])

    def add_many(self, records: Sequence[R]) -> None:
        """Many rows in one driver-level executemany."""
        if not records:
            return
        _, names, _ = _insert_statement(self._table, self._connection.dialect)
        to_values = self._mapping.to_values(names, defaults(self._table))
        self.add_rows(names, [to_values(record) for record in records])

    def add_rows(self, fields: tuple[str, ...], rows: Sequence[tuple[Value, ...]]) -> None:
        """Rows already encoded (their values in `fields` order), inserted and sealed as
        `add_many` does records."""
        insert_rows(self._connection, self._table, fields, rows)
        self._sealed.update(map(inserted(self._table.name, fields), rows))

    def get(self, identifier: str) -> R:
        row = self._connection.execute(
            select(self._table).where(self._key == identifier)
        ).mappings().first()
        if row is None:
            raise NotFound(f"no {self._mapping.kind} {identifier}")
        return self._remember(row)

    def find(self, order_by: str | None = None, *, status: StrEnum | None = None,
             **equals: str | int) -> list[R]:
        query = select(self._table)
        if status is not None:
            query = query.where(self._table.c.status == status.value)
        for column, value in equals.items():
            query = query.where(self._table.c[column] == value)
        if order_by:
            query = query.order_by(self._table.c[order_by])
        return [self._remember(row) for row in self._connection.execute(query).mappings()]

    def claim(self, query: Select[Any]) -> list[R]:
        """The rows of `query` (a SELECT of this table), locked for this transaction; rows that
        another transaction holds are skipped, not waited for (FOR UPDATE SKIP LOCKED on
        PostgreSQL; SQLite's write transaction already keeps every other writer out)."""
        locked = query.with_for_update(skip_locked=True)
        return [self._remember(row) for row in self._connection.execute(locked).mappings()]

    def _remember(self, row: Row) -> R:
        record = self._mapping.from_row(row)
        self._loaded[str(getattr(record, self._mapping.key))] = self._mapping.to_row(record)
        return record

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
        query = update(self._table).where(self._key == identifier)
        if expected_status is not None:
            query = query.where(self._table.c.status == expected_status.value)
        if not changed:  # nothing to write, but the compare-and-set must still hold
            query = query.values({self._mapping.key: identifier})
        else:
            query = query.values(changed)
        result = self._connection.execute(query)
        if result.rowcount != 1:
            current = self._connection.execute(
                select(self._table.c.status).where(self._key == identifier)
            ).scalar()
            if current is None:
                raise NotFound(f"no {self._mapping.kind} {identifier}")
            raise IllegalTransition(self._mapping.kind, str(current), str(row.get("status")),
                                    f"{identifier} changed concurrently "
                                    f"(expected {expected_status})")
        self._loaded[identifier] = row
        self._touched.add(identifier)
