"""Records to the JSON documents of DESIGN.md §4: camelCase keys, enum values, ISO times.

One generic walk each way: the documents are, by design, every field of a record under its
camelCase name, so a per-record list would only repeat the dataclass. The row codecs
(`agentctl.store.rows`) decode every nested JSON column through `from_json`, built from the
type hints once per type (closures, no generated code), so a field added to a record needs no
second edit here.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable, Hashable, Mapping
from dataclasses import MISSING, Field, fields, is_dataclass
from datetime import datetime
from enum import Enum
from functools import cache, lru_cache
from typing import TypeVar, cast

from agentctl.domain.clock import from_iso, to_iso

T = TypeVar("T")
Decoder = Callable[[object], object]

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
            kind = type(item)
            out[key] = item if kind in _PLAIN else \
                item.value if issubclass(kind, Enum) else to_json(item)
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


# Field metadata: the field was added after records of its type were first sealed. While it holds
# its default it is left out of what is sealed (`sealed_json`), so a record written before it
# existed keeps its digest and `audit verify` still passes on an old home.
ADDED_LATER = "agentctl.added_later"
LATER = {ADDED_LATER: True}


# Field metadata: the field was added after records of its type were first sealed, but without
# `LATER`, so it has been sealed even at its default since it came (marking it now would change
# those seals). A record written before it existed was sealed without it: `audit verify` also
# accepts the digest taken with it left out at its default (`sealed_before_json`).
ADDED_UNMARKED = "agentctl.added_later_unmarked"
LATER_UNMARKED = {ADDED_UNMARKED: True}


def sealed_json(value: object) -> object:
    """`to_json` as a record is sealed: fields added later are left out at their default."""
    return _sealed(value, (ADDED_LATER,))


def sealed_before_json(value: object) -> object | None:
    """`sealed_json` as the record was sealed before its `LATER_UNMARKED` fields existed (left
    out at their default too), or None when its type has none: then `sealed_json` is all."""
    if not is_dataclass(value) or isinstance(value, type) \
            or not _reaches(type(value), ADDED_UNMARKED):
        return None
    return _sealed(value, (ADDED_LATER, ADDED_UNMARKED))


def _sealed(value: object, marks: tuple[str, ...]) -> object:
    """`to_json`, leaving out the fields carrying one of `marks` where they hold their default."""
    if is_dataclass(value) and not isinstance(value, type):
        if not any(_reaches(type(value), mark) for mark in marks):
            return to_json(value)
        out: dict[str, object] = {}
        for item_field, key in _fields_and_keys(type(value)):
            item = getattr(value, item_field.name)
            if any(item_field.metadata.get(mark) for mark in marks) \
                    and item == item_field.default:
                continue
            out[key] = _sealed(item, marks)
        return out
    if isinstance(value, (list, tuple)):
        return [_sealed(item, marks) for item in value]
    return to_json(value)


@cache
def _fields_and_keys(cls: type) -> tuple[tuple[Field[object], str], ...]:
    return tuple((f, camel(f.name)) for f in fields(cls))


@cache
def type_hints(cls: type) -> dict[str, object]:
    """A record's field types, evaluated once a process: its sealing rule and its decoder
    both read them, and evaluating a class's string annotations is most of what either costs."""
    return typing.get_type_hints(cls)


@cache
def _reaches(tp: object, mark: str) -> bool:
    """Whether a value of type `tp` may hold a field carrying `mark`, at any depth."""
    if isinstance(tp, type) and is_dataclass(tp):
        hints = type_hints(tp)
        return any(f.metadata.get(mark) or _reaches(hints[f.name], mark) for f in fields(tp))
    return any(_reaches(arg, mark) for arg in typing.get_args(tp))


def dumps(value: object) -> str:
    return json.dumps(to_json(value), indent=2, ensure_ascii=False)


def from_json(cls: type[T], data: object) -> T:
    """The record `to_json` made `data` from; a missing key takes the field's default, so
    documents written before a field existed still decode. KeyError/TypeError/ValueError on a
    document that is not one."""
    return cast(T, _decoder(cast(Hashable, cls))(data))


@cache
def _decoder(tp: object) -> Decoder:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        choice = _decoder(inner[0]) if len(inner) == 1 else _as_is
        return lambda v: None if v is None else choice(v)
    if origin is tuple:
        item = _decoder(args[0])
        return lambda v: tuple(item(x) for x in _sequence(v))
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        value_of = _decoder(args[1]) if len(args) == 2 else _as_is
        return lambda v: {str(k): value_of(x) for k, x in _mapping(v).items()}
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    if tp is datetime:
        return lambda v: v if isinstance(v, datetime) else from_iso(str(v))
    if tp is float:
        return lambda v: float(cast(float, v))
    if isinstance(tp, type) and is_dataclass(tp):
        return _dataclass_decoder(tp)
    return _as_is


def _dataclass_decoder(cls: type) -> Decoder:
    hints = type_hints(cls)
    plan = [(f.name, camel(f.name), _decoder(hints[f.name]),
             f.default is not MISSING or f.default_factory is not MISSING)
            for f in fields(cls) if f.init]

    def decode(data: object) -> object:
        document = _mapping(data)
        values = {}
        for name, key, decode_field, has_default in plan:
            if key in document:
                values[name] = decode_field(document[key])
            elif not has_default:
                raise KeyError(f"{cls.__name__} needs {key!r}")
        return cls(**values)

    return decode


def _as_is(value: object) -> object:
    return value


def _sequence(value: object) -> list[object]:
    if not isinstance(value, list | tuple):
        raise TypeError(f"expected a list, not {type(value).__name__}")
    return list(value)


def _mapping(value: object) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise TypeError(f"expected an object, not {type(value).__name__}")
    return value
