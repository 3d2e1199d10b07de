"""SQLAlchemy's engine: a PostgreSQL store's connections, and any store's migrations.

A SQLite home's own writes and reads go through the stdlib driver (`transactions`, `views`);
what comes here is PostgreSQL (pooled connections that are pinged before use, and reconnected
while the server is away) and Alembic's migrations, which run on an engine whatever the
database.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import OperationalError

from agentctl.domain.errors import StoreUnavailable
from agentctl.store.outages import outage_text
from agentctl.store.transactions import (
    BUSY_TIMEOUT_SECONDS,
    begin_immediate,
    prepare_connection,
    remember,
)

RECONNECT_SECONDS = 30.0  # how long a lost shared database is retried before giving up
_SHORTEST_WAIT = 0.05  # between two tries, however little of the lease is left


def engine_for(url: str) -> Engine:
    return database_for(url).engine


@lru_cache(maxsize=8)
def database_for(url: str) -> EngineDatabase:
    """The process's one engine for `url`, closed with the other databases at exit."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_SECONDS,
                                                  "check_same_thread": False})
        _configure_sqlite(engine)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    database = EngineDatabase(engine)
    remember(url, database)
    return database


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        prepare_connection(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:  # type: ignore[no-untyped-def]
        begin_immediate(connection.connection.driver_connection)


class EngineDatabase:
    """Write transactions on an engine's pooled connections, begun by SQLAlchemy and run on
    the driver's cursor (the statements are compiled ahead, as on SQLite)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name

    def begin(self) -> EngineTransaction:
        return EngineTransaction(reconnecting(self.engine, self._begin), self.dialect)

    def _begin(self) -> Connection:
        connection = self.engine.connect()
        try:
            connection.begin()
        except BaseException:
            connection.close()
            raise
        return connection

    def close(self) -> None:
        self.engine.dispose()


class EngineTransaction:
    __slots__ = ("_connection", "dialect")

    def __init__(self, connection: Connection, dialect: str) -> None:
        self._connection = connection
        self.dialect = dialect

    def cursor(self) -> Any:
        return self._connection.connection.driver_connection.cursor()  # type: ignore[union-attr]

    def commit(self) -> None:
        self._connection.commit()

    def rollback(self) -> None:
        self._connection.rollback()

    def close(self) -> None:
        self._connection.close()


T = TypeVar("T")


def reconnecting(engine: Engine, connect: Callable[[], T], *,
                 patience: float = RECONNECT_SECONDS) -> T:
    """`connect()`, retried with backoff while a shared database cannot be reached (it restarts,
    the network drops); StoreUnavailable once `patience` runs out, or the lease this thread
    works under (`lease_deadline`), whichever comes first; no wait between tries is longer than
    a quarter of the lease left, so a database back in time is found in time. Only connecting
    is retried: a transaction cut half-way is rolled back and its caller decides, so nothing is
    written twice and every retried write passes its lease fence again."""
    if engine.dialect.name == "sqlite":
        return connect()  # a file: nothing to wait for (locks are begin_immediate's)
    from agentctl.services.lease_deadline import seconds_left

    deadline = time.monotonic() + patience
    delay = 0.1
    while True:
        try:
            return connect()
        except (OperationalError, engine.dialect.loaded_dbapi.OperationalError) as error:
            # SQLAlchemy wraps the driver's error, but a raw connection (the views) raises it bare
            left = seconds_left()
            wait = delay * random.uniform(0.5, 1.5)
            if left is not None:
                wait = min(wait, max(left / 4, _SHORTEST_WAIT))
            if time.monotonic() + wait > deadline or (left is not None and wait >= left):
                raise StoreUnavailable(f"the database cannot be reached: "
                                       f"{outage_text(error)}") from error
        time.sleep(wait)
        delay = min(delay * 2, 2.0)

