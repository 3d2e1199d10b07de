"""Time as the domain sees it: aware UTC datetimes, stored and shown as ISO 8601 with a `Z`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


_last: list[tuple[datetime, str]] = []


def to_iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    for seen, text in _last:  # one moment stamps a step, its tool call and their events
        if seen is moment:
            return text
    utc = moment if moment.tzinfo is UTC else moment.astimezone(UTC)
    text = utc.isoformat(timespec="microseconds")[:-6] + "Z"
    _last[:] = [(moment, text), *_last[:1]]
    return text


def from_iso(text: str | None) -> datetime | None:
    if text is None:
        return None
    return datetime.fromisoformat(text)
