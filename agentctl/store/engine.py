"""The engine, and the one place that knows SQLite: pragmas, WAL, and write locking.

Write transactions on SQLite begin IMMEDIATE, so the write lock is taken up front and no
transaction can fail later upgrading a read lock. Waiting for that lock is our own loop of short,
jittered sleeps rather than SQLite's busy handler, whose sleeps grow to 100 ms: with several
workers making many short transactions, those sleeps, not the work, would set the pace.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import OperationalError

from agentctl.domain.errors import StoreUnavailable

BUSY_TIMEOUT_SECONDS = 120
RECONNECT_SECONDS = 30.0  # how long a lost shared database is retried before giving up


_MADE: list[Engine] = []


@lru_cache(maxsize=8)
def engine_for(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_SECONDS,
                                                  "check_same_thread": False})
        _configure_sqlite(engine)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    _MADE.append(engine)
    return engine


def close_engines() -> None:
    """Close every pooled connection this process opened, as the interpreter's teardown would
    (the last one to close a SQLite database checkpoints its WAL into it)."""
    for engine in _MADE:
        engine.dispose()


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        prepare_connection(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:  # type: ignore[no-untyped-def]
        begin_immediate(connection.connection.driver_connection)


T = TypeVar("T")


def reconnecting(engine: Engine, connect: Callable[[], T], *,
                 patience: float = RECONNECT_SECONDS) -> T:
    """`connect()`, retried with backoff while a shared database cannot be reached (it restarts,
    the network drops); StoreUnavailable once `patience` runs out. Only connecting is retried:
    a transaction cut half-way is rolled back and its caller decides, so nothing is written
    twice and every retried write passes its lease fence again."""
    if engine.dialect.name == "sqlite":
        return connect()  # a file: nothing to wait for (locks are begin_immediate's)
    deadline = time.monotonic() + patience
    delay = 0.1
    while True:
        try:
            return connect()
        except (OperationalError, engine.dialect.loaded_dbapi.OperationalError) as error:
            # SQLAlchemy wraps the driver's error, but a raw connection (the views) raises it bare
            if time.monotonic() + delay > deadline:
                raise StoreUnavailable(f"the database cannot be reached: "
                                       f"{outage_text(error)}") from error
        time.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 2, 2.0)


def outage_errors(*, postgresql: bool) -> tuple[type[BaseException], ...]:
    """Every error a store raises when it, not the request, fails: its driver's own classes
    (the views' raw connections raise them unwrapped), SQLAlchemy's wrappers, StoreUnavailable,
    and the disk's OSErrors (full, read-only). Whoever must outlive an outage catches these.
    PostgreSQL's driver only for a PostgreSQL store: importing it costs more than a SQLite run's
    whole start-up."""
    from sqlalchemy.exc import DBAPIError

    errors: list[type[BaseException]] = [StoreUnavailable, DBAPIError, sqlite3.Error, OSError]
    if postgresql:
        try:
            import psycopg
        except ImportError:  # no PostgreSQL driver: no PostgreSQL store either
            pass
        else:
            errors.append(psycopg.Error)
    return tuple(errors)


def outage_text(error: BaseException) -> str:
    """One line naming what failed, in the driver's or the system's words (not SQLAlchemy's
    wrapper, whose text carries the statement and a link)."""
    driver = getattr(error, "orig", None) or error
    if isinstance(driver, OSError) and driver.strerror:
        where = f" {driver.filename}" if driver.filename else ""
        return f"cannot write{where}: {driver.strerror}"
    words = str(driver).strip() or type(driver).__name__
    return words.splitlines()[0]


_LOCKED = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def prepare_connection(connection: sqlite3.Connection) -> None:
    """A new connection's settings: WAL, NORMAL syncs, foreign keys, and no busy handler.

    The switch to WAL waits in our loop, not SQLite's: processes opening a new database at once
    each hold a read lock while asking to switch its journal, and SQLite refuses its busy
    handler there (it would deadlock), so all but one would fail "database is locked" at once."""
    connection.isolation_level = None  # we issue BEGIN ourselves
    _once_unlocked(connection, "PRAGMA journal_mode=WAL")
    cursor = connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=0")  # begin_immediate does the waiting
    cursor.close()


def begin_immediate(connection: sqlite3.Connection) -> None:
    """Take the write lock, waiting for it up to BUSY_TIMEOUT_SECONDS in short steps."""
    _once_unlocked(connection, "BEGIN IMMEDIATE")


def _once_unlocked(connection: sqlite3.Connection, statement: str) -> None:
    """Run `statement`, again after a short sleep while another connection holds the lock it
    needs, up to BUSY_TIMEOUT_SECONDS."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    delay = 0.0005
    while True:
        try:
            connection.execute(statement)
            return
        except sqlite3.OperationalError as error:
            # the low byte of the extended result code is the primary one
            if error.sqlite_errorcode & 0xFF not in _LOCKED:
                raise
            if time.monotonic() >= deadline:
                raise
        time.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 1.5, 0.005)


def event_count(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.exec_driver_sql("SELECT count(*) FROM event").scalar() or 0)
