"""Write transactions on the driver: the stdlib's sqlite3 for a SQLite home, SQLAlchemy's
engine (pooling, reconnecting) for PostgreSQL.

A SQLite command that writes needs nothing of SQLAlchemy but the statements it compiled ahead
(`compiled_statements.py`), so it opens its connections here and never imports it. Write
transactions on SQLite begin IMMEDIATE, so the write lock is taken up front and no
transaction can fail later upgrading a read lock. Waiting for that lock is our own loop of short,
jittered sleeps (`when_unlocked`) rather than SQLite's busy handler, whose sleeps grow to 100 ms:
with several workers making many short transactions, those sleeps, not the work, would set the
pace. So these connections have no busy handler, and every statement on them that can meet a
lock runs in that loop: BEGIN IMMEDIATE, the switch to WAL, and the reads outside a write
transaction (the schema revision a store checks first). In WAL mode a read can meet one too:
a connection's first read of the database as WAL meets, for a moment, another's WAL recovery,
or the last connection's cleanup as it closes (SQLite's "sometimes queries return SQLITE_BUSY
in WAL mode"). Inside a write transaction nothing does: BEGIN IMMEDIATE took every lock it
needs, and COMMIT in WAL mode waits for none.
"""

from __future__ import annotations

import atexit
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, Protocol, TypeVar

from agentctl.store.busy import BUSY_TIMEOUT_SECONDS

T = TypeVar("T")
P = ParamSpec("P")


class Transaction(Protocol):
    """One begun write transaction on a DB-API connection."""

    dialect: str

    def cursor(self) -> Any: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


class Database(Protocol):
    """Where write transactions come from."""

    dialect: str

    def begin(self) -> Transaction: ...
    def close(self) -> None: ...


class SqliteDatabase:
    """A SQLite file's connections, kept open between transactions (each new one sets its
    pragmas and may switch the journal) and shared by the threads of a process."""

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def begin(self) -> SqliteTransaction:
        connection = self._take()
        try:
            begin_immediate(connection)
        except BaseException:
            connection.close()
            raise
        return SqliteTransaction(self, connection)

    def connect(self) -> sqlite3.Connection:
        """A connection outside the pool (its caller closes it)."""
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS,
                                     check_same_thread=False)
        try:
            prepare_connection(connection)
        except BaseException:
            connection.close()
            raise
        return connection

    def _take(self) -> sqlite3.Connection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self.connect()

    def give_back(self, connection: sqlite3.Connection) -> None:
        with self._lock:
            self._idle.append(connection)

    def close(self) -> None:
        """Close the idle connections (the last to close a database checkpoints its WAL)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


class SqliteTransaction:
    __slots__ = ("_database", "_connection")
    dialect = "sqlite"

    def __init__(self, database: SqliteDatabase, connection: sqlite3.Connection) -> None:
        self._database = database
        self._connection: sqlite3.Connection | None = connection

    def cursor(self) -> sqlite3.Cursor:
        assert self._connection is not None, "the transaction has ended"
        return self._connection.cursor()

    def commit(self) -> None:
        assert self._connection is not None, "the transaction has ended"
        self._connection.commit()

    def rollback(self) -> None:
        assert self._connection is not None, "the transaction has ended"
        self._connection.rollback()

    def close(self) -> None:
        """Back to the pool when no transaction is left open on it, else closed: a connection
        whose COMMIT or ROLLBACK failed is not one to reuse."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if connection.in_transaction:
            connection.close()  # SQLite rolls back what was left open
        else:
            self._database.give_back(connection)


_LOCKED = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def prepare_connection(connection: sqlite3.Connection) -> None:
    """A new connection's settings: WAL, NORMAL syncs, foreign keys, and no busy handler.

    The switch to WAL waits in our loop, not SQLite's: processes opening a new database at once
    each hold a read lock while asking to switch its journal, and SQLite refuses its busy
    handler there (it would deadlock), so all but one would fail "database is locked" at once."""
    connection.isolation_level = None  # we issue BEGIN ourselves
    when_unlocked(connection.execute, "PRAGMA journal_mode=WAL")
    cursor = connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=0")  # when_unlocked does the waiting
    cursor.close()


def begin_immediate(connection: sqlite3.Connection) -> None:
    """Take the write lock, waiting for it up to BUSY_TIMEOUT_SECONDS in short steps."""
    when_unlocked(connection.execute, "BEGIN IMMEDIATE")


def when_unlocked(action: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`action(*args)`, again after a short sleep while another connection holds a lock it
    needs, up to BUSY_TIMEOUT_SECONDS; then the driver's "database is locked". Only for what
    is safe to run again: a statement refused SQLITE_BUSY did nothing, and reads change
    nothing."""
    deadline = None
    delay = 0.0005
    while True:
        try:
            return action(*args, **kwargs)
        except sqlite3.OperationalError as error:
            # the low byte of the extended result code is the primary one
            if error.sqlite_errorcode & 0xFF not in _LOCKED:
                raise
            now = time.monotonic()
            if deadline is None:
                deadline = now + BUSY_TIMEOUT_SECONDS
            elif now >= deadline:
                raise
        time.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 1.5, 0.005)


_OPEN: dict[str, Database] = {}
_OPENING = threading.Lock()


def sqlite_database(path: Path) -> SqliteDatabase:
    """The process's one SqliteDatabase for the file at `path`."""
    with _OPENING:
        found = _OPEN.get(str(path))
        if found is None:
            found = _OPEN[str(path)] = SqliteDatabase(path)
    assert isinstance(found, SqliteDatabase)
    return found


def remember(url: str, database: Database) -> None:
    """Keep `database` to be closed with the others at exit (`close_all`)."""
    with _OPENING:
        _OPEN.setdefault(url, database)


def close_all() -> None:
    """Close every pooled connection this process opened, as the interpreter's teardown would
    (the last one to close a SQLite database checkpoints its WAL into it)."""
    with _OPENING:
        opened = list(_OPEN.values())
    for database in opened:
        database.close()


atexit.register(close_all)  # the process's exit closes what it opened, however it leaves
