"""Time as the domain sees it: aware UTC datetimes, stored and shown as ISO 8601 with a `Z`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime | None) -> str | None:
    return None if moment is None else iso_text(moment)


@lru_cache(maxsize=8192)
def iso_text(moment: datetime) -> str:
    """Cached: one moment stamps a step, its tool call and their events, thousands per batch.
    Equal instants in other time zones hash alike and give the same UTC text."""
    utc = moment if moment.tzinfo is UTC else moment.astimezone(UTC)
    return utc.isoformat(timespec="microseconds")[:-6] + "Z"


def from_iso(text: str | None) -> datetime | None:
    if text is None:
        return None
    return datetime.fromisoformat(text)
