"""Waiting for work: LISTEN on PostgreSQL, a plain sleep on SQLite.

A notification only ends the wait early; workers look at the queue after every wait whether one
came or not, so a lost notification (or a listener that cannot connect) costs at most one poll.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from agentctl.debug_log import logger
from agentctl.home import Home
from agentctl.store.uow import WAKE_CHANNEL


class WakeUps:
    def __init__(self, home: Home) -> None:
        self._url = home.database_url
        self._listener: Any = None
        self._warned = False

    def wait(self, seconds: float) -> None:
        """Return after `seconds`, or sooner when a run is queued."""
        if not self._url.startswith("postgresql"):
            time.sleep(seconds)
            return
        started = time.monotonic()
        try:
            listener = self._listen()
            for _ in listener.notifies(timeout=seconds, stop_after=1):
                pass
        except Exception as error:  # noqa: BLE001 - a hint only: fall back to the poll
            self._listen_failed(error)
            self.close()
            time.sleep(max(0.0, seconds - (time.monotonic() - started)))

    def _listen_failed(self, error: Exception) -> None:
        """Said once per worker (each wait after it falls back to the poll again), then only
        in the debug log: why queued runs are picked up a poll late."""

        level = logging.DEBUG if self._warned else logging.WARNING
        self._warned = True
        logger("agentctl.worker").log(level, "agentctl: cannot LISTEN for queued runs (%s: %s); polling instead",
                   type(error).__name__, str(error).strip().splitlines()[0] if str(error).strip()
                   else "")

    def _listen(self) -> Any:
        if self._listener is None:
            from agentctl.store.listen import listener  # psycopg, the postgres extra

            self._listener = listener(self._url, WAKE_CHANNEL)
        return self._listener

    def close(self) -> None:
        if self._listener is not None:
            try:
                self._listener.close()
            finally:
                self._listener = None
