"""The write path's SQL, written once as Core statements over `tables.py` and compiled ahead for
each dialect into `compiled_statements.py`, as the reads are (`queries.py`): a command that
writes runs them on the driver and never imports SQLAlchemy (its import alone is a third of a
run's start-up, benchmarks/bench_bugfix.py --phases).

    python -m agentctl.store.statements    # rewrites compiled_statements.py (a test checks it is)

Three kinds of entry:
- `STATEMENTS`: each fixed statement by name (`fence`, `get:run`, `insert:step`, ...);
- `PIECES`: per table, the clauses `prebuilt` joins into the statements whose shape a call
  decides (the columns a `save` changed, the columns a `find` matches, how many keys a seal reads
  back); a test holds each join to what SQLAlchemy compiles for the same statement;
- `SHAPES`: per table, what the write path needs to know of it (columns in order, key, defaults,
  which columns are booleans and floats).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    Float,
    Integer,
    Select,
    Table,
    Update,
    bindparam,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.expression import Executable

from agentctl.domain.enums import AttemptStatus, RunStatus
from agentctl.domain.events import GENESIS_HASH
from agentctl.domain.transitions import UNFINISHED_RUN
from agentctl.store import tables
from agentctl.store.generated import module_of
from agentctl.store.queries import constants, dialects
from agentctl.store.seal_rules import NOT_RECORDS, sealed_columns

_ATTEMPT = tables.attempt
_RUN = tables.run
_HEAD = tables.event_head
_IS_LIVE = _ATTEMPT.c.status.in_([literal(status.value)
                                  for status in (AttemptStatus.STARTING, AttemptStatus.ACTIVE)])


def _while_held() -> Update:
    """An UPDATE of the attempt that matches only while it holds that unexpired lease."""
    return update(_ATTEMPT).where(
        _ATTEMPT.c.attempt_id == bindparam("attempt_id"),
        _ATTEMPT.c.lease_id == bindparam("lease_id"),
        _IS_LIVE,
        _ATTEMPT.c.lease_expires_at > bindparam("now"),
    )


def _expired() -> Select[Any]:
    return (select(_ATTEMPT)
            .where(_IS_LIVE, _ATTEMPT.c.lease_expires_at <= bindparam("now"))
            .order_by(_ATTEMPT.c.lease_expires_at, _ATTEMPT.c.attempt_id))


def _key(table: Table) -> Any:
    (key,) = table.primary_key.columns
    return key


def _fixed() -> dict[str, Callable[[], Executable]]:
    made: dict[str, Callable[[], Executable]] = {
        "fence": lambda: _while_held().values(fenced_writes=_ATTEMPT.c.fenced_writes + 1),
        "extend": lambda: _while_held().values(last_heartbeat_at=bindparam("beat"),
                                               lease_expires_at=bindparam("until")),
        "set_run_status": lambda: (update(_RUN).where(_RUN.c.run_id == bindparam("id"),
                                                      _RUN.c.status == bindparam("expected"))
                                   .values(status=bindparam("target"))),
        "record_directory": lambda: (update(_ATTEMPT)
                                     .where(_ATTEMPT.c.attempt_id == bindparam("id"))
                                     .values(directory=bindparam("directory"))),
        "directories": lambda: select(_ATTEMPT.c.directory).where(
            _ATTEMPT.c.attempt_id.in_(bindparam("ids", expanding=True)),
            _ATTEMPT.c.directory.is_not(None)),
        "next_queued": lambda: (
            select(_RUN)
            .where(_RUN.c.status == literal(RunStatus.QUEUED.value),
                   or_(_RUN.c.not_before.is_(None), _RUN.c.not_before <= bindparam("now")))
            .order_by(_RUN.c.run_id)
            .limit(1)
            .with_for_update(skip_locked=True)),
        "expired": lambda: _expired().with_for_update(skip_locked=True),
        "expired_up_to": lambda: (_expired().limit(bindparam("limit", type_=Integer))
                                  .with_for_update(skip_locked=True)),
        "unfinished_runs": lambda: select(func.count()).select_from(_RUN).where(
            _RUN.c.task_id == bindparam("task_id"), _RUN.c.run_id != bindparam("besides"),
            _RUN.c.status.in_([literal(status.value) for status in sorted(UNFINISHED_RUN)])),
        "last_run_number": lambda: select(func.max(_RUN.c.number)).where(
            _RUN.c.task_id == bindparam("task_id")),
        "head:lock": lambda: (select(_HEAD.c.seq, _HEAD.c.hash).where(_HEAD.c.id == 1)
                              .with_for_update()),
        "head:move": lambda: (update(_HEAD).where(_HEAD.c.id == 1,
                                                  _HEAD.c.seq == bindparam("old"))
                              .values(seq=bindparam("seq"), hash=bindparam("hash"))),
    }
    for table in tables.metadata.sorted_tables:
        made[f"insert:{table.name}"] = partial(insert, table)
        made[f"get:{table.name}"] = partial(_get, table)
        if "status" in table.c:
            made[f"status:{table.name}"] = partial(_status, table)
    return made


def _get(table: Table) -> Select[Any]:
    return select(table).where(_key(table) == bindparam("key"))


def _status(table: Table) -> Select[Any]:
    return select(table.c.status).where(_key(table) == bindparam("key"))


def head_create(dialect: str) -> Executable:
    """The chain head's row, made by whoever writes a database's first event."""
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    return insert(_HEAD).values(id=1, seq=0, hash=literal(GENESIS_HASH)) \
        .on_conflict_do_nothing()


def statement(name: str, dialect: str) -> Executable:
    if name == "head:create":
        return head_create(dialect)
    return _fixed()[name]()


def names() -> list[str]:
    return sorted([*_fixed(), "head:create"])


# What the joined statements are made of, per table. Each piece is cut from a statement
# SQLAlchemy compiles, so quoting, casts and parameter style are the dialect's own.

def sealed_read(table: Table, columns: tuple[str, ...]) -> Select[Any]:
    """The sealed columns of the rows whose keys are `keys` (a seal's read-back)."""
    return select(*(table.c[column] for column in columns)).where(
        _key(table).in_(bindparam("keys", expanding=True)))


def update_of(table: Table, changed: tuple[str, ...], compare_status: bool) -> Update:
    """`Repository.save`'s UPDATE: the columns `changed` (each from `set_<column>`) of the row
    `key`, only while its status is `expected` when `compare_status`; with nothing changed it
    sets the key to itself, so the compare-and-set still holds."""
    key = _key(table)
    query = update(table).where(key == bindparam("key"))
    if compare_status:
        query = query.where(table.c.status == bindparam("expected"))
    if not changed:
        return query.values({key.name: bindparam("key")})
    return query.values({name: bindparam(f"set_{name}") for name in changed})


def matching(table: Table, names: tuple[str, ...], order_by: str | None) -> Select[Any]:
    """`Repository.find`'s SELECT: the rows whose columns `names` equal the parameters of
    those names, in `order_by` order."""
    query = select(table).where(*(table.c[name] == bindparam(name) for name in names))
    return query.order_by(table.c[order_by]) if order_by else query


def _after(text: str, marker: str) -> str:
    at = text.index(marker)
    return text[at + len(marker):]


def pieces(table: Table, dialect: Dialect) -> dict[str, Any]:
    key = _key(table)

    def sql(statement: Executable) -> str:
        return str(statement.compile(dialect=dialect))  # type: ignore[attr-defined]

    everything = sql(select(table))
    head = sql(update(table).values({key.name: bindparam("key")}))
    return {
        "select": everything,
        "update": head[:head.index(" SET ") + len(" SET ")],
        "set": {column.name: _after(sql(update(table).values(
            {column.name: bindparam(f"set_{column.name}")})), " SET ")
            for column in table.columns},
        "set_key": _after(head, " SET "),
        "equals": {column.name: _after(sql(select(table).where(
            column == bindparam(column.name))), "WHERE ") for column in table.columns},
        "key_is": _after(sql(select(table).where(key == bindparam("key"))), "WHERE "),
        "status_is": (_after(sql(select(table).where(table.c.status == bindparam("expected"))),
                             "WHERE ") if "status" in table.c else None),
        "order": {column.name: _after(sql(select(table).order_by(column)), "ORDER BY ")
                  for column in table.columns},
        "read_back": (None if table.name in NOT_RECORDS else  # never sealed: never read back
                      sql(sealed_read(table, sealed_columns(table.name, tuple(table.c.keys()))))),
    }


def shape(table: Table) -> dict[str, Any]:
    return {
        "columns": tuple(column.name for column in table.columns),
        "key": _key(table).name,
        "defaults": {column.name: getattr(column.default, "arg", None)
                     for column in table.columns if column.default is not None},
        "booleans": tuple(c.name for c in table.columns if isinstance(c.type, Boolean)),
        "floats": tuple(c.name for c in table.columns if isinstance(c.type, Float)),
    }


@cache
def insert_dialect(dialect: str) -> Dialect:
    """INSERTs on SQLite take `?`: their executemany of thousands of rows binds tuples."""

    return sqlite.dialect(paramstyle="qmark") if dialect == "sqlite" else dialects()[dialect]


Entry = tuple[str, tuple[str, ...] | None, dict[str, object]]
"""A statement as `compiled_statements` holds it: its SQL, the order a positional driver takes
its parameters in (None: by name), and the values of the parameters it holds itself (a literal,
a `+ 1`)."""


def compile_one(name: str, dialect: str) -> Entry:
    target = insert_dialect(dialect) if name.startswith("insert:") else dialects()[dialect]
    done = statement(name, dialect).compile(dialect=target)  # type: ignore[attr-defined]
    order = tuple(done.positiontup or ()) if done.positional else None
    return str(done), order, constants(done)


def compiled() -> dict[str, Any]:
    return {
        "STATEMENTS": {dialect: {name: compile_one(name, dialect) for name in names()}
                       for dialect in dialects()},
        "PIECES": {dialect: {table.name: pieces(table, made)
                             for table in tables.metadata.sorted_tables}
                   for dialect, made in dialects().items()},
        "PLACEHOLDER": {dialect: {"named": ":{}", "pyformat": "%({})s"}[made.paramstyle]
                        for dialect, made in dialects().items()},
        "SHAPES": {table.name: shape(table) for table in tables.metadata.sorted_tables},
    }


TARGET = Path(__file__).with_name("compiled_statements.py")


def render() -> str:

    done = compiled()
    return module_of("python -m agentctl.store.statements", "statements.py", [
        ("STATEMENTS", "dict[str, dict[str, tuple[str, tuple[str, ...] | None, dict[str, Any]]]]",
         done["STATEMENTS"]),
        ("PIECES", "dict[str, dict[str, dict[str, Any]]]", done["PIECES"]),
        ("PLACEHOLDER", "dict[str, str]", done["PLACEHOLDER"]),
        ("SHAPES", "dict[str, dict[str, Any]]", done["SHAPES"]),
    ], preamble="from typing import Any\n")


if __name__ == "__main__":
    from agentctl.store.generated import write

    write(TARGET, render())
