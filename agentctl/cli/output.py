"""stdout carries data (tables, JSON); stderr carries diagnostics and progress."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
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


@contextmanager
def live_status(message: str) -> Iterator[Callable[[str], None]]:
    """A live status line on stderr while long work runs, updated through the yielded callback.

    Nothing at all is drawn when stderr is not a terminal, so logs and pipes stay clean.
    """
    if not sys.stderr.isatty():
        yield lambda _text: None
        return
    with err().status(message) as status:
        yield lambda text: status.update(f"{message}: {text}")
