"""Records to the JSON documents of DESIGN.md §4: camelCase keys, enum values, ISO times.

One generic walk: the documents are, by design, every field of a record under its camelCase
name, so a per-record list would only repeat the dataclass. Decoding is explicit per record, in
`agentctl.store.rows` and `agentctl.store.json_columns`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from datetime import datetime
from enum import Enum
from functools import cache, lru_cache

from agentctl.domain.clock import to_iso

_PLAIN = (str, int, bool, type(None))


@lru_cache(maxsize=512)
def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_json(value: object) -> object:
    """A plain JSON-able value; dataclass fields become camelCase keys."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return to_iso(value)
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, object] = {}
        for name, key in _keys(type(value)):
            item = getattr(value, name)
            out[key] = item if type(item) in _PLAIN else to_json(item)
        return out
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(item) for item in value]
    raise TypeError(f"cannot serialise {type(value).__name__}")


@cache
def _keys(cls: type) -> tuple[tuple[str, str], ...]:
    """(field name, JSON key) per field of a record type, computed once."""
    return tuple((f.name, camel(f.name)) for f in fields(cls))


def dumps(value: object) -> str:
    return json.dumps(to_json(value), indent=2, ensure_ascii=False)
