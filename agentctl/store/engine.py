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
from functools import lru_cache

from sqlalchemy import Engine, create_engine, delete, event, insert, inspect
from sqlmodel import SQLModel

from agentctl.store import tables
from agentctl.store.location import Home

BUSY_TIMEOUT_SECONDS = 120


@lru_cache(maxsize=8)
def engine_for(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_SECONDS,
                                                  "check_same_thread": False})
        _configure_sqlite(engine)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    return engine


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=0")  # begin_immediate does the waiting
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:  # type: ignore[no-untyped-def]
        begin_immediate(connection.connection.driver_connection)


def begin_immediate(connection: sqlite3.Connection) -> None:
    """Take the write lock, waiting for it up to BUSY_TIMEOUT_SECONDS in short steps."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    delay = 0.0005
    while True:
        try:
            connection.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
            if time.monotonic() >= deadline:
                raise
        time.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 1.5, 0.005)


def ensure_schema(home: Home) -> Engine:
    """Create the home and the tables on first use; one cheap query when they exist."""
    home.root.mkdir(parents=True, exist_ok=True)
    engine = engine_for(home.database_url)
    if _schema_version(engine) != str(tables.SCHEMA_VERSION):
        # In one write transaction: when several processes start on a fresh home at once, one
        # creates the tables and the others, waiting for the lock, find them there.
        with engine.begin() as connection:
            SQLModel.metadata.create_all(connection)
            meta = tables.MetaRow.__table__
            connection.execute(delete(meta).where(meta.c.key == "schema_version"))
            connection.execute(insert(meta).values(key="schema_version",
                                                   value=str(tables.SCHEMA_VERSION)))
    return engine


def _schema_version(engine: Engine) -> str | None:
    with engine.connect() as connection:
        if not inspect(connection).has_table(tables.MetaRow.__tablename__):
            return None
        row = connection.exec_driver_sql(
            "SELECT value FROM meta WHERE key = 'schema_version'").first()
    return row[0] if row else None


def event_count(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.exec_driver_sql("SELECT count(*) FROM event").scalar() or 0)
