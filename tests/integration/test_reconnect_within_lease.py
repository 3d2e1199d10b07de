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


def test_a_database_back_while_the_lease_lasts_is_found_in_time(nowhere: str) -> None:
    """Away for three tries, back on the fourth: connected, within a lease of two seconds (a
    wait never longer than a quarter of what is left of it)."""
    engine = create_engine(nowhere)
    tries = 0
    lease_ends = time.monotonic() + 2.0

    def connect() -> str:
        nonlocal tries
        tries += 1
        if tries < 4:
            engine.connect()  # refused: the real driver's error, as SQLAlchemy wraps it
        return "connected"

    with bounded_by(lambda: lease_ends):
        assert reconnecting(engine, connect, patience=20.0) == "connected"
    assert tries == 4
    engine.dispose()


def test_the_retries_are_stamina_s_policy_so_its_test_mode_caps_them(nowhere: str) -> None:
    """One declared retry policy (stamina's): a test suite that caps retries with stamina's
    switch caps the store's reconnects too, with no waits between them."""
    import stamina

    engine = create_engine(nowhere)
    tries = 0

    def connect() -> Connection:
        nonlocal tries
        tries += 1
        return engine.connect()

    stamina.set_testing(True, attempts=2)
    try:
        with pytest.raises(StoreUnavailable, match="the database cannot be reached"):
            reconnecting(engine, connect, patience=20.0)
    finally:
        stamina.set_testing(False)
    assert tries == 2
    engine.dispose()
