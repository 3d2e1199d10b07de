"""A worker whose LISTEN cannot connect falls back to polling, and says so once: the reason
queued runs are picked up a poll late is no longer swallowed."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest

from agentctl.home import Home
from agentctl.store.wakeup import WakeUps


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_listen_that_cannot_connect_is_said_once_then_only_in_the_debug_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url = f"postgresql+psycopg://nobody@127.0.0.1:{_closed_port()}/agentctl"
    wakeups = WakeUps(Home(root=tmp_path, database_url=url))
    with caplog.at_level(logging.DEBUG, logger="agentctl.worker"):
        wakeups.wait(0.01)
        wakeups.wait(0.01)
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "agentctl.worker"]
    assert [level for level, _ in said] == [logging.WARNING, logging.DEBUG]
    assert said[0][1].startswith("agentctl: cannot LISTEN for queued runs (OperationalError: ")
    assert said[0][1].endswith("); polling instead")
