"""SQLAlchemy's engine: a PostgreSQL store's connections, and any store's migrations.

A SQLite home's own writes and reads go through the stdlib driver (`transactions`, `views`);
what comes here is PostgreSQL (pooled connections that are pinged before use, and reconnected
while the server is away) and Alembic's migrations, which run on an engine whatever the
database.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import OperationalError

from agentctl.domain.errors import StoreUnavailable
from agentctl.services.lease_deadline import seconds_left
from agentctl.store.busy import BUSY_TIMEOUT_SECONDS
from agentctl.store.outages import outage_text
from agentctl.store.transactions import begin_immediate, prepare_connection, remember

if TYPE_CHECKING:
    import stamina

RECONNECT_SECONDS = 30.0  # how long a lost shared database is retried before giving up
_FIRST_WAIT = 0.1  # then doubled each try, up to
_LONGEST_WAIT = 2.0
_JITTER = 0.1  # at most this much added at random to each wait
_SHORTEST_WAIT = 0.05  # between two tries, however little of the lease is left
# stamina notes each scheduled retry as a warning, which with no logging set up would reach a
# command's stderr once per try; the outage's one line is StoreUnavailable's
logging.getLogger("stamina").addHandler(logging.NullHandler())


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
    written twice and every retried write passes its lease fence again.

    The policy is stamina's (exponential backoff with jitter, bounded in time, its test mode);
    the lease's bound is its backoff hook, asked after each failed try, since the lease can run
    out (or be extended) while the database is away."""
    if engine.dialect.name == "sqlite":
        return connect()  # a file: nothing to wait for (locks are begin_immediate's)
    import stamina  # with the postgres extra, as the driver is

    # SQLAlchemy wraps the driver's error, but a raw connection (the views) raises it bare
    lost = (OperationalError, engine.dialect.loaded_dbapi.OperationalError)
    tries = stamina.retry_context(on=lambda error: _again(error, lost, seconds_left(), current),
                                  attempts=None, timeout=patience, wait_initial=_FIRST_WAIT,
                                  wait_max=_LONGEST_WAIT, wait_jitter=_JITTER)
    try:
        for current in tries:
            with current:
                return connect()
    except lost as error:
        raise StoreUnavailable(f"the database cannot be reached: {outage_text(error)}") \
            from error
    raise AssertionError("unreachable: stamina raises the last error once it stops")


def _again(error: BaseException, lost: tuple[type[Exception], ...], left: float | None,
           current: stamina.Attempt) -> bool | float:
    """After a failed try: False to stop, True for stamina's next wait, or a shorter wait in
    seconds (a quarter of the lease left, when stamina's could be longer)."""
    if not isinstance(error, lost):
        return False
    if left is None:
        return True
    bound = max(left / 4, _SHORTEST_WAIT)
    if bound >= left:
        return False  # the lease ends before another try could tell
    return True if current.next_wait + _JITTER <= bound else bound
