"""The engine, and the one place that knows SQLite: pragmas, WAL, and write locking.

Write transactions on SQLite begin IMMEDIATE so that two writers queue on the busy timeout
instead of one failing with `database is locked` when it upgrades a read lock.
"""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import Engine, create_engine, event, inspect
from sqlmodel import Session, SQLModel, select

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
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:  # type: ignore[no-untyped-def]
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def ensure_schema(home: Home) -> Engine:
    """Create the home and the tables on first use; cheap when they exist."""
    home.root.mkdir(parents=True, exist_ok=True)
    engine = engine_for(home.database_url)
    version = None
    if inspect(engine).has_table(tables.MetaRow.__tablename__):
        with Session(engine) as session:
            version = session.exec(
                select(tables.MetaRow.value).where(tables.MetaRow.key == "schema_version")
            ).first()
    if version != str(tables.SCHEMA_VERSION):
        SQLModel.metadata.create_all(engine)
        with Session(engine) as session:
            session.merge(tables.MetaRow(key="schema_version", value=str(tables.SCHEMA_VERSION)))
            session.commit()
    return engine
