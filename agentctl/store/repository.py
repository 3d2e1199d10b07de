"""Generic repository over one table: add, get, find, and compare-and-set status updates."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Generic, TypeVar

from sqlalchemy import Connection, Dialect, Table, insert, select, update

from agentctl.domain.errors import IllegalTransition, NotFound
from agentctl.store.codec import from_row, row_encoder, to_row

R = TypeVar("R")


@lru_cache(maxsize=64)
def _columns(table: Table) -> tuple[tuple[str, object], ...]:
    """(name, default) per column; the default of columns the records do not carry."""
    return tuple((column.name, getattr(column.default, "arg", None)) for column in table.columns)


def insert_rows(connection: Connection, table: Table, fields: tuple[str, ...],
                rows: Sequence[tuple[object, ...]]) -> None:
    """One driver-level executemany of `rows` (values in `fields` order), skipping the ORM's
    per-row parameter processing."""
    sql, names, positional = _insert_statement(table, connection.dialect)
    if positional and names == fields:
        params: list[object] = list(rows)
    else:
        params = [dict(zip(fields, row, strict=True)) for row in rows]
        if positional:
            params = [tuple(row[name] for name in names) for row in params]  # type: ignore[index]
    connection.exec_driver_sql(sql, params)  # type: ignore[arg-type]


@lru_cache(maxsize=64)
def _insert_statement(table: Table, dialect: Dialect) -> tuple[str, tuple[str, ...], bool]:
    """The INSERT compiled once for this dialect, and the order its parameters come in."""
    compiled = insert(table).compile(dialect=dialect)
    names = tuple(compiled.positiontup or ()) if compiled.positional else \
        tuple(column.name for column in table.columns)
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
        if not records:
            return
        sql, names, positional = _insert_statement(self._table, self._connection.dialect)
        defaults = dict(_columns(self._table))
        encode = row_encoder(self._type, tuple((name, defaults[name]) for name in names))
        rows = [encode(r) for r in records]
        params = rows if positional else [dict(zip(names, row, strict=True)) for row in rows]
        self._connection.exec_driver_sql(sql, params)  # type: ignore[arg-type]

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
