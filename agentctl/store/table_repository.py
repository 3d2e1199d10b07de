"""Repository over one table: add, get, find, and compare-and-set updates of changed columns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from functools import lru_cache
from typing import Generic, TypeVar, cast

from sqlalchemy import Connection, Dialect, Table, bindparam, insert, select, update

from agentctl.domain.errors import IllegalTransition, NotFound
from agentctl.store.prebuilt import Prebuilt
from agentctl.store.rows import RowMapping, RowValues, Value
from agentctl.store.seals import inserted

R = TypeVar("R")


def insert_rows(connection: Connection, table: Table, fields: tuple[str, ...],
                rows: Sequence[tuple[object, ...]]) -> None:
    """One driver-level executemany of `rows` (values in `fields` order), skipping the ORM's
    per-row parameter processing: the hot path of a busy agent."""
    if rows:
        _inserting(table).run_many(connection, fields, rows)


@lru_cache(maxsize=64)
def _inserting(table: Table) -> Prebuilt:
    return Prebuilt(insert(table))


def _insert_order(table: Table, dialect: Dialect) -> tuple[str, ...]:
    """The order the INSERT takes its parameters in: the driver's, else the table's."""
    return _inserting(table).compiled(dialect).order or \
        tuple(column.name for column in table.columns)


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
        names = _insert_order(self._table, self._connection.dialect)
        to_values = self._mapping.to_values(names, defaults(self._table))
        self.add_rows(names, [to_values(record) for record in records])

    def add_rows(self, fields: tuple[str, ...], rows: Sequence[tuple[Value, ...]]) -> None:
        """Rows already encoded (their values in `fields` order), inserted and sealed as
        `add_many` does records."""
        insert_rows(self._connection, self._table, fields, rows)
        self._sealed.update(map(inserted(self._table.name, fields), rows))

    def get(self, identifier: str) -> R:
        rows = _by_key(self._table).run(self._connection, {"key": identifier}).mappings()
        if not rows:
            raise NotFound(f"no {self._mapping.kind} {identifier}")
        return self._remember(rows[0])

    def find(self, order_by: str | None = None, *, status: StrEnum | None = None,
             **equals: str | int) -> list[R]:
        names = tuple(sorted(equals)) + (("status",) if status is not None else ())
        params: dict[str, object] = dict(equals)
        if status is not None:
            params["status"] = status.value
        statement = _matching(self._table, names, order_by)
        return [self._remember(row)
                for row in statement.run(self._connection, params).mappings()]

    def claim(self, query: Prebuilt, params: Mapping[str, object]) -> list[R]:
        """The rows of `query` (a SELECT of this table made FOR UPDATE SKIP LOCKED), locked for
        this transaction; rows that another transaction holds are skipped, not waited for
        (PostgreSQL; SQLite's write transaction already keeps every other writer out)."""
        return [self._remember(row) for row in query.run(self._connection, params).mappings()]

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
        statement = _update(self._table, tuple(changed), expected_status is not None)
        params: dict[str, object] = {f"set_{name}": value for name, value in changed.items()}
        params["key"] = identifier
        if expected_status is not None:
            params["expected"] = expected_status.value
        result = statement.run(self._connection, params)
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


@lru_cache(maxsize=32)
def _by_key(table: Table) -> Prebuilt:
    (key,) = table.primary_key.columns
    return Prebuilt(select(table).where(key == bindparam("key")))


@lru_cache(maxsize=128)
def _matching(table: Table, names: tuple[str, ...], order_by: str | None) -> Prebuilt:
    """The rows whose columns `names` equal the parameters of those names."""
    query = select(table).where(*(table.c[name] == bindparam(name) for name in names))
    return Prebuilt(query.order_by(table.c[order_by]) if order_by else query)


@lru_cache(maxsize=256)
def _update(table: Table, changed: tuple[str, ...], compare_status: bool) -> Prebuilt:
    """An UPDATE of the row `key` setting `changed` (each from `set_<column>`), only while its
    status is `expected` when `compare_status`; with nothing changed it sets the key to itself,
    so the compare-and-set still holds."""
    (key,) = table.primary_key.columns
    query = update(table).where(key == bindparam("key"))
    if compare_status:
        query = query.where(table.c.status == bindparam("expected"))
    if not changed:
        return Prebuilt(query.values({key.name: bindparam("key")}))
    return Prebuilt(query.values({name: bindparam(f"set_{name}") for name in changed}))
