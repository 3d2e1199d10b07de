"""The write path's statements, run as SQL text on the driver from their compilation ahead
(`statements.py` -> `compiled_statements.py`), so a command that writes imports no SQLAlchemy.

A write transaction holds SQLite's one write lock from its first statement to its commit, and
two workers on one store wait for each other there; building and compiling Core statements at
run time cost more than the database's own work for the small reads and updates a run makes.
Values are the driver's: the row codecs (`rows`) encode and decode them, as for the compiled
reads of `views`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from agentctl.store.compiled_statements import PIECES, PLACEHOLDER, STATEMENTS
from agentctl.store.table_shapes import SHAPES

if TYPE_CHECKING:
    from agentctl.store.transactions import Transaction


@dataclass(frozen=True, slots=True)
class Compiled:
    sql: str
    order: tuple[str, ...] | None  # the parameters' order for a positional driver
    fixed: Mapping[str, object]  # values the statement carries (`+ 1`, a literal, an OFFSET)


@cache
def named(name: str, dialect: str) -> Compiled:
    """A statement of `statements.py` by name."""
    sql, order, fixed = STATEMENTS[dialect][name]
    return Compiled(sql, order, fixed)


def run(transaction: Transaction, statement: Compiled, params: Mapping[str, object]) -> Outcome:
    """Execute in the transaction (the statement's result is read whole: a handful of rows)."""
    values = {**statement.fixed, **params} if statement.fixed else params
    cursor = transaction.cursor()
    try:
        if statement.order is None:
            cursor.execute(statement.sql, values)
        else:
            cursor.execute(statement.sql, tuple(values[name] for name in statement.order))
        if cursor.description is None:
            return Outcome((), [], cursor.rowcount)
        return Outcome(tuple(column[0] for column in cursor.description), cursor.fetchall(),
                       cursor.rowcount)
    finally:
        cursor.close()


def run_named(transaction: Transaction, name: str, params: Mapping[str, object]) -> Outcome:
    return run(transaction, named(name, transaction.dialect), params)


def run_many(transaction: Transaction, statement: Compiled, fields: tuple[str, ...],
             rows: Sequence[Sequence[object]]) -> None:
    """One executemany of `rows`, each holding the statement's parameters in `fields` order
    (a busy agent's batch of thousands: no per-row work beyond reordering, if any)."""
    cursor = transaction.cursor()
    try:
        if statement.order is None:
            cursor.executemany(statement.sql, [dict(zip(fields, row, strict=True)) for row in rows])
        elif statement.order == fields:
            cursor.executemany(statement.sql, rows)
        else:
            at = [fields.index(name) for name in statement.order]
            cursor.executemany(statement.sql, [tuple(row[i] for i in at) for row in rows])
    finally:
        cursor.close()


def expanding(statement: Compiled, name: str, count: int, dialect: str) -> Compiled:
    """`statement` with its list parameter `name` (`IN (...)`) made `count` parameters
    `<name>_1`, `<name>_2`, ...: what SQLAlchemy does at execution, done once per size."""
    placeholder = PLACEHOLDER[dialect]
    listed = ", ".join(placeholder.format(f"{name}_{i}") for i in range(1, count + 1))
    return Compiled(statement.sql.replace(f"__[POSTCOMPILE_{name}]", listed), statement.order,
                    statement.fixed)


def listed(name: str, values: Sequence[object]) -> dict[str, object]:
    """The parameters of an expanded list parameter `name` holding `values`."""
    return {f"{name}_{at}": value for at, value in enumerate(values, start=1)}


@lru_cache(maxsize=256)
def listing(name: str, parameter: str, dialect: str, count: int) -> Compiled:
    """The named statement `name` with its list parameter `parameter` for `count` values."""
    return expanding(named(name, dialect), parameter, count, dialect)


@lru_cache(maxsize=256)
def read_back(table: str, dialect: str, count: int) -> Compiled:
    """The sealed columns of `count` rows of `table`, by key (`listed("keys", ...)`)."""
    return expanding(Compiled(PIECES[dialect][table]["read_back"], None, {}), "keys", count,
                     dialect)


@lru_cache(maxsize=256)
def update(table: str, dialect: str, changed: tuple[str, ...], compare_status: bool) -> Compiled:
    """`statements.update_of`: the UPDATE of the row `key` setting `changed` (each from
    `set_<column>`), only while its status is `expected` when `compare_status`."""
    pieces = PIECES[dialect][table]
    assigned = pieces["set"]
    sets = ", ".join(assigned[column] for column in SHAPES[table].columns  # as SQLAlchemy does
                     if column in changed) if changed else pieces["set_key"]
    where = pieces["key_is"] + (f" AND {pieces['status_is']}" if compare_status else "")
    return Compiled(f"{pieces['update']}{sets} WHERE {where}", None, {})


@lru_cache(maxsize=256)
def matching(table: str, dialect: str, names: tuple[str, ...], order_by: str | None
             ) -> Compiled:
    """`statements.matching`: the rows whose columns `names` equal the parameters of those
    names, in `order_by` order."""
    pieces = PIECES[dialect][table]
    sql = pieces["select"]
    if names:
        sql += " \nWHERE " + " AND ".join(pieces["equals"][name] for name in names)
    if order_by:
        sql += " ORDER BY " + pieces["order"][order_by]
    return Compiled(sql, None, {})


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
