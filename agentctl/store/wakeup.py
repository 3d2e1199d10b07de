"""Waiting for work: LISTEN on PostgreSQL, a plain sleep on SQLite.

A notification only ends the wait early; workers look at the queue after every wait whether one
came or not, so a lost notification (or a listener that cannot connect) costs at most one poll.
"""

from __future__ import annotations

import time
from typing import Any

from agentctl.home import Home
from agentctl.store.uow import WAKE_CHANNEL


class WakeUps:
    def __init__(self, home: Home) -> None:
        self._url = home.database_url
        self._listener: Any = None

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
        except Exception:  # noqa: BLE001 - a hint only: fall back to the poll
            self.close()
            time.sleep(max(0.0, seconds - (time.monotonic() - started)))

    def _listen(self) -> Any:
        if self._listener is None:
            import psycopg
            from sqlalchemy.engine import make_url

            url = make_url(self._url).set(drivername="postgresql")
            self._listener = psycopg.connect(url.render_as_string(hide_password=False),
                                             autocommit=True, connect_timeout=5)
            self._listener.execute(f"LISTEN {WAKE_CHANNEL}")
        return self._listener

    def close(self) -> None:
        if self._listener is not None:
            try:
                self._listener.close()
            finally:
                self._listener = None
