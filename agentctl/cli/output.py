"""stdout carries data (tables, JSON); stderr carries diagnostics and progress."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def emit_json(data: object) -> None:
    from agentctl.domain.serialize import to_json

    sys.stdout.write(json.dumps(to_json(data), indent=2, ensure_ascii=False) + "\n")


@lru_cache(maxsize=1)
def out() -> Console:
    from rich.console import Console

    # Not a terminal (a pipe, a test): no colour, and wide enough that ids are never wrapped.
    return Console(width=None if sys.stdout.isatty() else 200, highlight=False, emoji=False)


@lru_cache(maxsize=1)
def err() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, emoji=False)


def note(message: str) -> None:
    """A diagnostic line on stderr (plain, so scripts can read it)."""
    sys.stderr.write(message + "\n")


class LiveStatus:
    """A status line on stderr while long work runs, updated by calling it; `paused()` clears
    it while a prompt waits for an answer. When stderr is not a terminal (a CI log), each
    update is a plain line instead, so long work is never silent."""

    def __init__(self, message: str) -> None:
        self.message = message
        self._status = err().status(message) if sys.stderr.isatty() else None

    def __enter__(self) -> LiveStatus:
        if self._status is not None:
            self._status.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._status is not None:
            self._status.stop()

    def __call__(self, text: str) -> None:
        if self._status is not None:
            from agentctl.cli.render.style import escape

            self._status.update(f"{escape(self.message)}: {escape(text)}")
        else:
            from agentctl.cli.render.style import printable

            note(f"agentctl: {printable(text)}")

    @contextmanager
    def paused(self) -> Iterator[None]:
        if self._status is None:
            yield
            return
        self._status.stop()
        try:
            yield
        finally:
            self._status.start()


def live_status(message: str) -> LiveStatus:
    return LiveStatus(message)
