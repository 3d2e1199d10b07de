"""Statements built once and run as SQL text on the driver: the write path's hot statements.

A write transaction holds SQLite's one write lock from its first statement to its commit, and
two workers on one store wait for each other there. Building a Core statement, computing its
cache key and looking up its compiled form cost more than the database's own work for the
small reads and updates a run makes, so those are written here once, with bind parameters,
compiled on first use per dialect and then executed on the transaction's own driver connection
(SQLAlchemy begins and commits it). Values are the driver's: the row codecs (`rows`) encode and
decode them, as for the compiled reads of `views`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Dialect
from sqlalchemy.sql.expression import Executable


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    order: tuple[str, ...] | None  # the parameters' order for a positional driver (SQLite)
    fixed: Mapping[str, object]  # values the statement carries (`+ 1`, a LIMIT)


class Prebuilt:
    """One statement with bind parameters, compiled once per dialect."""

    __slots__ = ("statement", "_compiled")

    def __init__(self, statement: Executable) -> None:
        self.statement = statement
        self._compiled: dict[str, _Compiled] = {}

    def compiled(self, dialect: Dialect) -> _Compiled:
        found = self._compiled.get(dialect.name)
        if found is None:
            compiled = self.statement.compile(dialect=dialect)  # type: ignore[attr-defined]
            found = self._compiled[dialect.name] = _Compiled(
                str(compiled),
                tuple(compiled.positiontup or ()) if compiled.positional else None,
                {name: value for name, value in compiled.params.items() if value is not None})
        return found

    def run(self, connection: Connection, params: Mapping[str, object]) -> Outcome:
        """Execute on the transaction's own driver connection, past SQLAlchemy's execution
        context and result objects (the statement's result is read whole: a handful of rows)."""
        compiled = self.compiled(connection.dialect)
        values = {**compiled.fixed, **params} if compiled.fixed else params
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            if compiled.order is None:
                cursor.execute(compiled.sql, values)
            else:
                cursor.execute(compiled.sql, tuple(values[name] for name in compiled.order))
            if cursor.description is None:
                return Outcome((), [], cursor.rowcount)
            return Outcome(tuple(column[0] for column in cursor.description), cursor.fetchall(),
                           cursor.rowcount)
        finally:
            cursor.close()

    def run_many(self, connection: Connection, fields: tuple[str, ...],
                 rows: Sequence[Sequence[object]]) -> None:
        """One executemany of `rows`, each holding the statement's parameters in `fields` order
        (a busy agent's batch of thousands: no per-row work beyond reordering, if any)."""
        compiled = self.compiled(connection.dialect)
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            if compiled.order is None:
                cursor.executemany(compiled.sql,
                                   [dict(zip(fields, row, strict=True)) for row in rows])
            elif compiled.order == fields:
                cursor.executemany(compiled.sql, rows)
            else:
                at = [fields.index(name) for name in compiled.order]
                cursor.executemany(compiled.sql, [tuple(row[i] for i in at) for row in rows])
        finally:
            cursor.close()


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a statement gave back: its rows (in column order) and how many rows it changed."""

    names: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    rowcount: int

    def mappings(self) -> list[dict[str, Any]]:
        return [dict(zip(self.names, row, strict=True)) for row in self.rows]

    def first(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def scalar(self) -> Any:
        return self.rows[0][0] if self.rows else None
