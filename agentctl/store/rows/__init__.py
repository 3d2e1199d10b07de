"""Rows to records and back: one explicit pair of functions per record, as procrastinate does.

Column names are the records' field names; enum columns hold their value, time columns ISO text,
nested values compact JSON text (camelCase keys, as the JSON the CLI shows). `*_to_row` gives
the record's own columns (a column it lacks, like `attempt.fenced_writes`, keeps its default or
stored value); `*_from_row` takes any row that can be indexed by column name (sqlite3.Row, a
SQLAlchemy RowMapping, a dict). No SQLAlchemy here, and one module per group of records, so a
read command imports only the records it shows (`task list` none of the run machinery).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from agentctl.domain.clock import to_iso
from agentctl.domain.json_text import compiled
from agentctl.domain.serialize import to_json

R = TypeVar("R")
RowValues = dict[str, str | int | float | bool | None]
"""A record's columns as the driver takes them."""


class Row(Protocol):
    """A stored row, indexed by column name; values are the driver's (str, int, float, None)."""

    def __getitem__(self, key: str, /) -> Any: ...


def iso(moment: datetime) -> str:
    return to_iso(moment) or ""


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""`json.dumps(..., separators=(",", ":"), ensure_ascii=False)`'s encoder, built once."""
_encode_compact = compiled(_COMPACT)


def dump(value: object) -> str:
    """Nested values as compact JSON text; empty ones as `{}`/`[]` without the encoder."""
    if not value and isinstance(value, (dict, tuple, list)):
        return "{}" if isinstance(value, dict) else "[]"
    return _encode_compact(to_json(value))


def dump_plain(document: object) -> str:
    """`dump` of a value that already is plain JSON (no records, enums or times in it)."""
    return _encode_compact(document)


def load(text: str) -> Any:
    return json.loads(text)


@dataclass(frozen=True, slots=True)
class RowMapping(Generic[R]):
    """How one record type is stored: its table, key column and the two mapping functions."""

    table: str
    key: str
    kind: str  # the record's name in messages ("no run ...")
    to_row: Callable[[R], RowValues]
    from_row: Callable[[Row], R]
