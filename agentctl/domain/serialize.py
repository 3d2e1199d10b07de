"""Records to the JSON documents of DESIGN.md §4: camelCase keys, enum values, ISO times."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, fields, is_dataclass
from datetime import datetime
from enum import Enum
from functools import cache, lru_cache

from agentctl.domain.clock import from_iso, to_iso


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
        return _dataclass_encoder(type(value))(value)
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(item) for item in value]
    raise TypeError(f"cannot serialise {type(value).__name__}")


@cache
def _dataclass_encoder(cls: type) -> typing.Callable[[object], dict[str, object]]:
    """A generated `record -> dict` for one record type (the generic walk, per field, is what a
    busy recorder would otherwise spend its time on). Plain fields are copied, the rest
    encoded by `to_json`."""
    hints = _field_types(cls)
    parts = []
    for f in fields(cls):
        plain = hints[f.name] in (str, int, bool, str | None, int | None, bool | None)
        value = f"r.{f.name}" if plain else f"_to_json(r.{f.name})"
        parts.append(f"{camel(f.name)!r}: {value}")
    namespace: dict[str, object] = {"_to_json": to_json}
    exec(f"def encode(r):\n    return {{{', '.join(parts)}}}\n", namespace)  # noqa: S102
    return namespace["encode"]  # type: ignore[return-value]


def dumps(value: object) -> str:
    return json.dumps(to_json(value), indent=2, ensure_ascii=False)


# --- decoding -------------------------------------------------------------------------------
# The inverse of `to_json`, driven by the records' type hints. A plan per class is computed once,
# so decoding thousands of steps for `run show --tree` stays cheap.

Decoder = typing.Callable[[object], object]


def from_json(tp: object, data: object) -> object:
    return _decoder(tp)(data)


def decoder_for(tp: object) -> Decoder:
    """The decoding function for a type, to keep and call many times."""
    return _decoder(tp)


@cache
def _decoder(tp: object) -> Decoder:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        decode = _decoder(inner[0]) if len(inner) == 1 else (lambda v: v)
        return lambda v: None if v is None else decode(v)
    if origin is tuple:
        item = _decoder(args[0])
        return lambda v: tuple(item(x) for x in v)  # type: ignore[union-attr]
    if origin in (dict, Mapping, typing.Mapping) or tp in (dict, Mapping):
        value_decoder = _decoder(args[1]) if args else (lambda v: v)
        return lambda v: {k: value_decoder(x) for k, x in v.items()}  # type: ignore[union-attr]
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    if tp is datetime:
        return lambda v: v if isinstance(v, datetime) else from_iso(v)  # type: ignore[arg-type]
    if tp is float:
        return lambda v: float(v)  # type: ignore[arg-type]
    if isinstance(tp, type) and is_dataclass(tp):
        return _dataclass_decoder(tp)
    return lambda v: v


def _dataclass_decoder(cls: type) -> Decoder:
    hints = typing.get_type_hints(cls)
    plan = [(f.name, camel(f.name), _decoder(hints[f.name]),
             f.default is not MISSING or f.default_factory is not MISSING)
            for f in fields(cls)]

    def decode(data: object) -> object:
        assert isinstance(data, Mapping)
        kwargs = {}
        for name, key, decoder, optional in plan:
            if key in data:
                kwargs[name] = decoder(data[key])
            elif name in data:
                kwargs[name] = decoder(data[name])
            elif not optional:
                raise KeyError(f"{cls.__name__} needs {key!r}")
        return cls(**kwargs)

    return decode


def field_types(cls: type) -> dict[str, object]:
    """Resolved type hints of a record, cached; the store uses them to encode columns."""
    return _field_types(cls)


@cache
def _field_types(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)
