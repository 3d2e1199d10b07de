"""Rows to records and back, shared by the write path (SQLAlchemy) and the lean read path (sqlite3).

Column names are the records' field names; scalar columns hold scalars, enum columns their value,
time columns ISO text, everything nested JSON text. No SQLModel import here, so read-only
commands can decode rows without paying for the ORM.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from dataclasses import fields
from datetime import datetime
from enum import Enum
from functools import cache
from typing import TypeVar

from agentctl.domain.clock import to_iso
from agentctl.domain.serialize import Decoder, decoder_for, field_types, to_json

R = TypeVar("R")
_SCALARS = (str, int, float, bool)


def _is_scalar(tp: object) -> bool:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return len(inner) == 1 and _is_scalar(inner[0])
    return tp in _SCALARS or (isinstance(tp, type) and issubclass(tp, (Enum, datetime)))


Encoder = typing.Callable[[object], object]


def _encode_nested(value: object) -> object:
    if not value and isinstance(value, (dict, tuple, list)):
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(to_json(value), separators=(",", ":"), ensure_ascii=False)


def _encode_enum(value: object) -> object:
    return value.value  # type: ignore[attr-defined]


@cache
def _plan(cls: type) -> tuple[tuple[str, bool, object], ...]:
    hints = field_types(cls)
    return tuple((f.name, _is_scalar(hints[f.name]), hints[f.name]) for f in fields(cls))


@cache
def _encoders(cls: type) -> tuple[tuple[str, Encoder | None], ...]:
    """Per field: None for values stored as they are, else the function that encodes them."""
    out: list[tuple[str, Encoder | None]] = []
    for name, scalar, tp in _plan(cls):
        base = _without_none(tp)
        if not scalar:
            out.append((name, _encode_nested))
        elif isinstance(base, type) and issubclass(base, Enum):
            out.append((name, _encode_enum))
        elif base is datetime:
            out.append((name, to_iso))  # type: ignore[arg-type]
        else:
            out.append((name, None))
    return tuple(out)


def _without_none(tp: object) -> object:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return inner[0] if len(inner) == 1 else tp
    return tp


def row_encoder(cls: type, columns: tuple[tuple[str, object], ...],
                ) -> typing.Callable[[object], tuple[object, ...]]:
    """A function from a record to the tuple of its row in `columns` order (a column the
    record lacks gets that column's default).

    Generated once per record type, as attrs and dataclasses generate their methods: this is
    the innermost loop of a busy agent's recording, and a generic loop over fields costs several
    times the database work it feeds.
    """
    return _row_encoder(cls, columns)


@cache
def _row_encoder(cls: type, columns: tuple[tuple[str, object], ...],
                 ) -> typing.Callable[[object], tuple[object, ...]]:
    kinds = dict(_encoders(cls))
    namespace: dict[str, object] = {"_iso": to_iso, "_nested": _encode_nested}
    parts = []
    for index, (name, default) in enumerate(columns):
        if name not in kinds:
            namespace[f"_default{index}"] = default
            parts.append(f"_default{index}")
            continue
        encode = kinds[name]
        if encode is None:
            parts.append(f"r.{name}")
        elif encode is _encode_enum:
            parts.append(f"(None if (v := r.{name}) is None else v.value)")
        elif encode is to_iso:
            parts.append(f"(None if (v := r.{name}) is None else _iso(v))")
        else:
            parts.append(f"(None if (v := r.{name}) is None else _nested(v))")
    source = f"def encode(r):\n    return ({', '.join(parts)},)\n"
    exec(source, namespace)  # noqa: S102 - generated from the record's own field list
    return namespace["encode"]  # type: ignore[return-value]


def to_row(record: object) -> dict[str, object]:
    row: dict[str, object] = {}
    for name, encode in _encoders(type(record)):
        value = getattr(record, name)
        row[name] = value if encode is None or value is None else encode(value)
    return row


@cache
def _decoders(cls: type) -> tuple[tuple[str, Decoder | None], ...]:
    """Per field: None for values read as they are, else the function that decodes them."""
    out: list[tuple[str, Decoder | None]] = []
    for name, scalar, tp in _plan(cls):
        base = _without_none(tp)
        if not scalar:
            nested = decoder_for(tp)
            out.append((name, lambda text, nested=nested: nested(json.loads(text))))
        elif base in (str, int):
            out.append((name, None))
        elif base is bool:  # SQLite hands booleans back as 0 and 1
            out.append((name, bool))
        else:
            out.append((name, decoder_for(base)))
    return tuple(out)


def from_row(cls: type[R], row: Mapping[str, object]) -> R:
    keys = row.keys()
    kwargs: dict[str, object] = {}
    for name, decode in _decoders(cls):
        if name in keys:
            value = row[name]
            kwargs[name] = value if decode is None or value is None else decode(value)
    return cls(**kwargs)
