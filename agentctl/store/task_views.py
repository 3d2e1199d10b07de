"""The reads of tasks, sessions, ids and the event log: what `events`, `task list`, `task show`
and `session show` need, decoded into records, without the run and evidence records
(`views.Views` adds those).

The statements are those of `queries.py` (Core `select()`s over `tables.py`), compiled ahead
for each dialect: read-only commands run them on the driver (stdlib sqlite3 for SQLite) without
importing SQLAlchemy, which would cost more than the command (benchmarks/bench_startup.py), and
decode rows with the same codec as the write path. Reads never migrate: a database that is
behind is refused with the command that upgrades it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar, cast

from agentctl.domain import id_prefixes
from agentctl.domain.errors import NotFound
from agentctl.home import Home
from agentctl.store.busy import BUSY_TIMEOUT_SECONDS
from agentctl.store.compiled_queries import SQL
from agentctl.store.revision import HEAD, SchemaBehind, stored_revision
from agentctl.store.rows import tasks as task_rows

if TYPE_CHECKING:
    from pathlib import Path

    from agentctl.domain.enums import TaskStatus
    from agentctl.domain.task import Session, SessionMessage, Task
    from agentctl.domain.verification import VerificationReport
    from agentctl.services.unit_of_work import IdKind

R = TypeVar("R")
Row = Mapping[str, Any]
ChainRow = tuple[int, str, str | None, str | None, str | None, str | None, str, str, str, str]


class _Connection(Protocol):
    """The DB-API connection the views need: stdlib sqlite3, or psycopg's."""

    def cursor(self) -> Any: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


class TaskViews:
    def __init__(self, home: Home, *, repository: str | None = None) -> None:
        """`repository`: where the person stands; "the newest run" then means its newest.
        SchemaBehind when the database is behind this agentctl's schema: reads never migrate."""
        self._connection, self._dialect = _connect(home)
        self._sql = SQL[self._dialect]
        self.repository = repository
        # a run's verification reports, read once per snapshot: the biggest record a run has
        # (one entry per test), and the tree, the verdict and the page each want it
        self._verifications: dict[str, list[VerificationReport]] | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside sees the database as of one moment. Without it each query sees
        the latest commit: a check that reads the log and then the records would find a record
        whose event was committed in between, and call the trail broken."""
        if self._connection is None:
            yield
            return
        cursor = self._connection.cursor()
        if self._dialect == "sqlite":  # in WAL, a read transaction keeps its snapshot
            cursor.execute("BEGIN")
        else:  # PostgreSQL: READ COMMITTED would take a new snapshot per statement
            self._connection.rollback()  # the schema check's implicit transaction
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        self._verifications = {}  # nothing changes under a snapshot: what it read still holds
        try:
            yield
        finally:
            self._verifications = None
            self._connection.rollback()

    # --- plumbing: statements of `queries.py`, compiled ahead for this dialect ---------------
    def _execute(self, name: str, params: Mapping[str, object], *, named: bool) -> Any:
        """A cursor that ran statement `name`; rows by column name if `named`, else tuples."""
        assert self._connection is not None
        found = self._sql.get(name)
        if found is None:  # not compiled ahead (a table this agentctl does not know)
            from agentctl.store.queries import compile_one

            found = self._sql[name] = compile_one(name, self._dialect)
        sql, constants = found
        cursor = self._connection.cursor()
        if self._dialect == "sqlite" and not named:
            cursor.row_factory = None
        cursor.execute(sql, {**constants, **params})
        return cursor

    def _rows(self, name: str, **params: object) -> list[Row]:
        if self._connection is None:
            return []
        cursor = self._execute(name, params, named=True)
        if self._dialect == "sqlite":
            return cast("list[Row]", cursor.fetchall())
        names = [str(column[0]) for column in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _tuples(self, name: str, **params: object) -> list[tuple[Any, ...]]:
        """Rows as plain tuples in the order of the selected columns: for reads of many rows,
        without the per-row name lookup."""
        if self._connection is None:
            return []
        return [tuple(row) for row in self._execute(name, params, named=False).fetchall()]

    def _records(self, from_row: Callable[[Row], R], name: str, **params: object) -> list[R]:
        return [from_row(row) for row in self._rows(name, **params)]

    def table_names(self) -> list[str]:
        """The tables of the database as it is (a table a later schema added included)."""
        return sorted(str(row[0]) for row in self._tuples("table_names"))

    def everything(self, table: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """(column names as the database gives them, every row as a tuple) of `table`."""
        if self._connection is None:
            return [], []
        cursor = self._execute(f"everything:{table}", {}, named=False)
        names = [str(column[0]) for column in cursor.description or ()]
        return names, [tuple(row) for row in cursor.fetchall()]

    def all_rows(self, table: str) -> list[Row]:
        """Every row of a table this agentctl knows, by column name."""
        return self._rows(f"everything:{table}")

    def count(self, table: str) -> int:
        found = self._tuples(f"count:{table}")
        return int(found[0][0]) if found else 0

    def call_digest_rows(self) -> list[Row]:
        """The columns of every tool call that its digest covers (`audit verify`)."""
        return self._rows("call_digests")

    def resolve(self, kind: IdKind, text: str) -> str:
        low, high = id_prefixes.prefix_bounds(id_prefixes.full_prefix(kind, text))
        found = [str(row[0]) for row in self._tuples(f"resolve:{kind}", low=low, high=high)]
        return id_prefixes.pick_unique(kind, text, found)

    def short_ids(self, kind: IdKind, full: Sequence[str]) -> dict[str, str]:
        """Each id cut to the shortest prefix no other stored id of its kind shares (as git
        abbreviates hashes), one length for all so a column stays aligned."""
        needed = len(kind) + 1 + id_prefixes.MIN_PREFIX_CHARS
        for one in full:
            for side in ("below", "above"):
                found = self._tuples(f"{side}:{kind}", id=one)
                neighbour = found[0][0] if found else None
                if neighbour:
                    needed = max(needed, _shared(one, str(neighbour)) + 1)
        return {one: one[:needed] for one in full}

    def _one(self, from_row: Callable[[Row], R], name: str, missing: str, **params: object,
             ) -> R:
        found = self._records(from_row, name, **params)
        if not found:
            raise NotFound(missing)
        return found[0]

    # --- tasks and sessions -------------------------------------------------------------------
    def tasks(self, *, limit: int, status: TaskStatus | None = None,
              session_id: str | None = None, repository: str | None = None) -> list[Task]:
        given = given_filters(status=status.value if status else None, session_id=session_id,
                              repository=repository)
        return self._records(task_rows.task_from_row, f"tasks:{','.join(sorted(given))}",
                             **given, limit=limit)

    def task(self, text: str) -> Task:
        task_id = self.resolve("task", text)
        return self._one(task_rows.task_from_row, "task", f"no task {task_id}", task_id=task_id)

    def sessions(self, *, limit: int) -> list[Session]:
        return [self._with_tasks(s) for s in self._records(
            task_rows.session_from_row, "sessions", limit=limit)]

    def session(self, text: str) -> tuple[Session, list[SessionMessage]]:
        session_id = self.resolve("session", text)
        session = self._one(task_rows.session_from_row, "session", f"no session {session_id}",
                            session_id=session_id)
        messages = self._records(task_rows.session_message_from_row, "session_messages",
                                 session_id=session_id)
        return self._with_tasks(session), messages

    def _with_tasks(self, session: Session) -> Session:
        related = tuple(str(row[0]) for row in self._tuples(
            "session_tasks", session_id=session.session_id))
        return replace(session, related_tasks=related)

    # --- events -----------------------------------------------------------------------------
    def events(self, *, run_id: str | None = None, task_id: str | None = None,
               after_seq: int = 0, limit: int | None = None) -> list[Row]:
        given = given_filters(run_id=run_id, task_id=task_id, limit=limit)
        return self._rows(f"events:{','.join(sorted(given))}", **given, after_seq=after_seq)

    def event_chain(self) -> Iterator[ChainRow]:
        """Every event as the tuple `find_chain_breaks` checks, in order, streamed."""
        if self._connection is None:
            return iter(())
        return (tuple(row) for row in self._execute("event_chain", {}, named=False))

    def event_head(self) -> tuple[int, str] | None:
        found = self._tuples("event_head")
        return (int(found[0][0]), str(found[0][1])) if found else None


def given_filters(**filters: object) -> dict[str, object]:
    """The filters that were given: each picks the statement variant that has its clause."""
    return {name: value for name, value in filters.items() if value is not None}


def _shared(a: str, b: str) -> int:
    """How many leading characters `a` and `b` have in common."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _connect(home: Home) -> tuple[_Connection | None, str]:
    """A read connection to a database at the schema this agentctl needs, and its dialect.
    None when there is no database yet (nothing to read). A database that is behind is never
    migrated here, where a read could fail as a write: SchemaBehind names the command that does
    (writes bring the home's own SQLite database up to date on their first use as before)."""
    connection, dialect = _open(home)
    if connection is None or home.database_url in _CURRENT:
        return connection, dialect
    cursor = connection.cursor()
    try:
        current = stored_revision(cursor, dialect)
        empty = current is None and not _has_tables(cursor, dialect)
    finally:
        cursor.close()
    if current == HEAD:
        _CURRENT.add(home.database_url)
        return connection, dialect
    connection.close()
    if empty:  # a shared database nothing has written to yet
        return None, dialect
    where = f"is at schema revision {current}" if current else "predates schema revisions"
    raise SchemaBehind(f"the database {where}, this agentctl needs {HEAD}: "
                       "run 'agentctl db upgrade'")


_CURRENT: set[str] = set()
_IOERR = 10  # SQLITE_IOERR, the primary code of every I/O error
"""Databases this process found at HEAD already: a worker's frequent reads check once."""


def _has_tables(cursor: Any, dialect: str) -> bool:
    sql, constants = SQL[dialect]["table_names"]
    cursor.execute(sql, constants)
    return cursor.fetchone() is not None


def _open(home: Home) -> tuple[_Connection | None, str]:
    path = home.sqlite_path
    if path is not None:
        if not path.exists():
            return None, "sqlite"
        connection = _read_only(path)
        connection.row_factory = sqlite3.Row
        return connection, "sqlite"
    from agentctl.store.engine import engine_for, reconnecting  # another database: via SQLAlchemy

    engine = engine_for(home.database_url)
    return reconnecting(engine, engine.raw_connection), engine.dialect.name


def _read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file. Its first read maps the WAL's shared index
    (`-shm`), which a full disk refuses (a disk I/O error, where reads should still work): then
    the file is read as immutable, without that index, when its WAL holds nothing (every commit
    is in the file, as when no writer has it open); with the disk full, no writer adds one.
    Unlike the writers' connections it keeps SQLite's busy handler, for as long as theirs wait:
    a read that meets a lock held a moment (another's WAL recovery, the last connection's
    cleanup) waits for it, and no read here runs often enough for the handler's sleeps to
    matter."""
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True,
                                 timeout=BUSY_TIMEOUT_SECONDS)
    try:
        connection.execute("PRAGMA schema_version").fetchone()
        return connection
    except sqlite3.OperationalError as error:
        connection.close()
        if error.sqlite_errorcode & 0xFF != _IOERR or _wal_bytes(path):
            raise
    return sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)


def _wal_bytes(path: Path) -> int:
    """The size of the database's write-ahead log; 0 when there is none."""
    try:
        return (path.parent / f"{path.name}-wal").stat().st_size
    except FileNotFoundError:
        return 0
