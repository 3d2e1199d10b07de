"""Reconnecting to a shared database that is away never outlives the lease the thread works
under: it stops trying once the lease has run out, and tries again while some of it is left.
A real PostgreSQL engine of SQLAlchemy's, pointed at a port nobody listens on."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, create_engine

from agentctl.domain.errors import StoreUnavailable
from agentctl.services.lease_deadline import bounded_by, seconds_left
from agentctl.store.engine import reconnecting


@pytest.fixture
def nowhere() -> Iterator[str]:
    with socket.socket() as held:  # bound, never listening: every connection is refused
        held.bind(("127.0.0.1", 0))
        yield f"postgresql+psycopg://agentctl@127.0.0.1:{held.getsockname()[1]}/agentctl"


def test_reconnecting_stops_once_the_lease_has_run_out(nowhere: str) -> None:
    engine = create_engine(nowhere)
    tries = 0
    lease_ends = time.monotonic() + 3600.0

    def connect() -> Connection:
        nonlocal tries, lease_ends
        tries += 1
        if tries == 3:
            lease_ends = time.monotonic()  # the lease runs out while the database is away
        return engine.connect()

    with bounded_by(lambda: lease_ends), pytest.raises(StoreUnavailable):
        reconnecting(engine, connect, patience=20.0)
    assert tries == 3
    engine.dispose()


def test_without_a_lease_reconnecting_waits_out_its_patience(nowhere: str) -> None:
    engine = create_engine(nowhere)
    tries = 0

    def connect() -> Connection:
        nonlocal tries
        tries += 1
        return engine.connect()

    assert seconds_left() is None
    with pytest.raises(StoreUnavailable):
        reconnecting(engine, connect, patience=0.5)
    assert tries >= 2
    engine.dispose()
