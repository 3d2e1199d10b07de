"""Helpers for end-to-end tests: what the database holds, and a home built once and copied."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.workers_support import Fleet, fleet_at

DB = "agentctl.db"


def db_state(home: Path) -> dict[str, object] | None:
    """Row counts of every table, plus the last event: None when there is no database at all."""
    path = home / DB
    if not path.exists():
        return None
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as connection:
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        state: dict[str, object] = {
            table: connection.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            for table in tables
        }
        if "event" in tables:
            state["last_event"] = connection.execute(
                "SELECT seq, hash FROM event ORDER BY seq DESC LIMIT 1").fetchone()
    return state


def one_error_line(stderr: str) -> str:
    """The single diagnostic line a rejected command prints; fails on tracebacks or chatter."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("agentctl: error: "), stderr
    return lines[0]


@pytest.fixture
def state_of() -> Callable[[Path], dict[str, object] | None]:
    """`state_of(home)`: row counts and the last event, or None when there is no database."""
    return db_state


@pytest.fixture
def error_line() -> Callable[[str], str]:
    """`error_line(stderr)`: the one `agentctl: error:` line, asserting there is nothing else."""
    return one_error_line


@pytest.fixture
def copy_home(tmp_path: Path) -> Callable[[Path], Path]:
    """`copy_home(template)`: a private copy of a home built once per module."""
    def copy(template: Path) -> Path:
        target = tmp_path / "home-copy"
        shutil.copytree(template, target)
        return target

    return copy


@pytest.fixture
def fleet(tmp_path: Path, run_agentctl: Callable[..., object],
          agentctl_executable: str) -> Iterator[Fleet]:
    """Worker processes on one store, configured with short leases and two attempts."""
    with fleet_at(tmp_path, run_agentctl, agentctl_executable) as fleet:
        fleet.configure(max_attempts=2)
        yield fleet
