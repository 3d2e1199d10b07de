"""Time as the domain sees it: aware UTC datetimes, stored and shown as ISO 8601 with a `Z`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return moment.isoformat(timespec="microseconds")[:-6] + "Z"


def from_iso(text: str | None) -> datetime | None:
    if text is None:
        return None
    return datetime.fromisoformat(text)
