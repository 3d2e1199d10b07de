"""Generic repository over one table: add, get, find, and compare-and-set status updates."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Generic, TypeVar

from sqlalchemy import Connection, Dialect, Table, insert, select, update

from agentctl.domain.errors import IllegalTransition, NotFound
from agentctl.store.codec import from_row, to_row

R = TypeVar("R")


@lru_cache(maxsize=64)
def _columns(table: Table) -> tuple[tuple[str, object], ...]:
    """(name, default) per column; the default of columns the records do not carry."""
    return tuple((column.name, getattr(column.default, "arg", None)) for column in table.columns)


def insert_rows(connection: Connection, table: Table, rows: Sequence[dict[str, object]]) -> None:
    """One driver-level executemany, skipping the ORM's per-row parameter processing."""
    sql, names, positional = _insert_statement(table, connection.dialect)
    params = [tuple(row[name] for name in names) for row in rows] if positional else list(rows)
    connection.exec_driver_sql(sql, params)  # type: ignore[arg-type]


@lru_cache(maxsize=64)
def _insert_statement(table: Table, dialect: Dialect) -> tuple[str, tuple[str, ...], bool]:
    """The INSERT compiled once for this dialect, and the order its parameters come in."""
    compiled = insert(table).compile(dialect=dialect)
    names = tuple(compiled.positiontup or ()) if compiled.positional else ()
    return str(compiled), names, bool(compiled.positional)


class Repository(Generic[R]):
    def __init__(self, connection: Connection, table: Table, record_type: type[R], key: str,
                 kind: str) -> None:
        self._connection = connection
        self._table = table
        self._type = record_type
        self._key = table.c[key]
        self._key_name = key
        self._kind = kind

    def add(self, record: R) -> None:
        self.add_many([record])

    def add_many(self, records: Sequence[R]) -> None:
        """Many rows in one driver-level executemany: the hot path of a busy agent."""
        if records:
            insert_rows(self._connection, self._table, [self._row(r) for r in records])

    def _row(self, record: R) -> dict[str, object]:
        """One value per column: the record's field, else the column's default. Fields with no
        column (a session's related tasks, derived on reading) are left out."""
        row = to_row(record)
        return {name: row.get(name, default) for name, default in _columns(self._table)}

    def get(self, identifier: str) -> R:
        row = self._connection.execute(
            select(self._table).where(self._key == identifier)
        ).mappings().first()
        if row is None:
            raise NotFound(f"no {self._kind} {identifier}")
        return from_row(self._type, row)

    def find(self, order_by: str | None = None, **equals: object) -> list[R]:
        query = select(self._table)
        for column, value in equals.items():
            query = query.where(self._table.c[column] == value)
        if order_by:
            query = query.order_by(self._table.c[order_by])
        rows = self._connection.execute(query).mappings().all()
        return [from_row(self._type, row) for row in rows]

    def find_in(self, column: str, values: Iterable[object], **equals: object) -> list[R]:
        query = select(self._table).where(self._table.c[column].in_(list(values)))
        for name, value in equals.items():
            query = query.where(self._table.c[name] == value)
        return [from_row(self._type, row) for row in self._connection.execute(query).mappings()]

    def save(self, record: R, *, expected_status: str | None = None) -> None:
        """Write `record` over its row; with `expected_status`, only if the row still has it.

        The compare-and-set repeats the transition rule in the database, so two processes that
        both think they may move a record cannot both succeed.
        """
        row = to_row(record)  # only the record's own fields: columns it lacks keep their values
        row = {name: row[name] for name, _ in _columns(self._table) if name in row}
        identifier = row.pop(self._key_name)
        query = update(self._table).where(self._key == identifier)
        if expected_status is not None:
            query = query.where(self._table.c.status == expected_status)
        result = self._connection.execute(query.values(**row))
        if result.rowcount != 1:
            current = self._connection.execute(
                select(self._table.c.status).where(self._key == identifier)
            ).scalar()
            if current is None:
                raise NotFound(f"no {self._kind} {identifier}")
            raise IllegalTransition(self._kind, str(current), str(row.get("status")),
                                    f"{identifier} changed concurrently (expected {expected_status})")
