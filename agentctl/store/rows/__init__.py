"""Rows to records and back: one codec per record type, derived from the record's fields.

Column names are the records' field names (tables.py), so a record's row is its fields, each
converted by its type: an enum column holds its value, a time column ISO text, a bool/float
column what the driver gives back (0/1, a number) as the field's type, and any nested value
(records, tuples, mappings) compact JSON text with camelCase keys, as the JSON the CLI shows,
decoded by `serialize.from_json`. What a type cannot say is written next to the record's codec:
a field the table does not keep (`skip`), several fields kept in one column (`packed`), or a
faster converter for a hot column (`encoders`). tests/unit/test_row_codecs.py holds each codec
to its table's columns.

`to_row` gives the record's own columns (a column it lacks, like `attempt.fenced_writes`, keeps
its default or stored value); `from_row` takes any row that can be indexed by column name
(sqlite3.Row, a SQLAlchemy RowMapping, a dict). No SQLAlchemy here, and one module per group of
records, so a read command imports only the records it shows (`task list` none of the run
machinery).
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from enum import Enum
from operator import attrgetter
from typing import Any, Generic, Protocol, TypeVar, cast

from agentctl._speedups.json_text import compiled
from agentctl.domain.clock import iso_text
from agentctl.domain.serialize import from_json, to_json, type_hints

R = TypeVar("R")
Value = str | int | float | bool | None
RowValues = dict[str, Value]
"""A record's columns as the driver takes them."""
Encoder = Callable[[Any], Value]
Decoder = Callable[[Any], object]


class Row(Protocol):
    """A stored row, indexed by column name; values are the driver's (str, int, float, None)."""

    def __getitem__(self, key: str, /) -> Any: ...


iso: Callable[[datetime], str] = iso_text
"""A time column's text: the cached `to_iso` itself, no call between (four per tool call)."""


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
class Packed(Generic[R]):
    """Several fields kept in one column: `encode` makes the column from the record, `decode`
    gives those fields' values back from the column (None when the row has none)."""

    fields: tuple[str, ...]
    encode: Callable[[R], Value]
    decode: Callable[[Any], Mapping[str, object]]


class RowMapping(Generic[R]):
    """How one record type is stored: its table, key column, and `to_row`/`from_row` derived
    from the record's fields: `RowMapping(Run, "run", "run_id", "run")`. One column per field
    (but `skip`ped and `packed` ones), each converted as its type says, or written by the
    converter `encoders` names for it; `columns` are the columns `to_row` writes."""

    __slots__ = ("table", "key", "kind", "_record", "_skip", "_packed", "_encoders", "_codec",
                 "_tuples")

    def __init__(self, record: type[R], table: str, key: str, kind: str, *,
                 skip: tuple[str, ...] = (), packed: Mapping[str, Packed[R]] | None = None,
                 encoders: Mapping[str, Encoder] | None = None) -> None:
        self.table, self.key = table, key
        self.kind = kind  # the record's name in messages ("no run ...")
        self._record, self._skip = record, skip
        self._packed, self._encoders = dict(packed or {}), dict(encoders or {})
        self._codec: _Codec[R] | None = None
        self._tuples: dict[tuple[str, ...], Callable[[R], tuple[Value, ...]]] = {}

    @property
    def record(self) -> type[R]:
        return self._record

    def to_values(self, names: tuple[str, ...], defaults: Mapping[str, Value]
                  ) -> Callable[[R], tuple[Value, ...]]:
        """`to_row` as a tuple in the order of `names` (an INSERT's parameters), a column the
        record lacks holding its value in `defaults`: compiled once per order, no dict per row
        (a busy agent inserts thousands of steps and tool calls per batch)."""
        found = self._tuples.get(names)
        if found is None:
            found = self._tuples[names] = self._compiled().tuple_of(names, defaults)
        return found

    @property
    def to_row(self) -> Callable[[R], RowValues]:
        """The compiled function itself: the hot path of a busy agent's writes takes it once."""
        return self._compiled().to_row

    def from_row(self, row: Row) -> R:
        """A method, so that `RUNS.from_row` can be handed around before the codec is built."""
        return self._compiled().from_row(row)

    @property
    def columns(self) -> tuple[str, ...]:
        return self._compiled().columns

    def _compiled(self) -> _Codec[R]:
        """Built on first use, so a command pays only for the records it reads or writes."""
        if self._codec is None:
            self._codec = _compile(self._record, self._skip, self._packed, self._encoders)
        return self._codec


@dataclass(frozen=True, slots=True)
class _Codec(Generic[R]):
    to_row: Callable[[R], RowValues]
    from_row: Callable[[Row], R]
    columns: tuple[str, ...]
    scope: Mapping[str, object]  # the converters the compiled source calls, by name
    expressions: Mapping[str, str]  # column -> the expression `to_row` computes it with

    def tuple_of(self, names: tuple[str, ...], defaults: Mapping[str, Value]
                 ) -> Callable[[R], tuple[Value, ...]]:
        scope = {**self.scope, **{f"_k_{at}": defaults.get(name)
                                  for at, name in enumerate(names)}}
        items = [self.expressions.get(name, f"_k_{at}") for at, name in enumerate(names)]
        source = f"def to_values(r):\n    return ({', '.join(items)},)\n"
        exec(compile(source, "<row values>", "exec"), scope)  # noqa: S102
        return cast(Callable[[R], tuple[Value, ...]], scope["to_values"])


def _compile(record: type[R], skip: tuple[str, ...], packed: Mapping[str, Packed[R]],
             encoders: Mapping[str, Encoder]) -> _Codec[R]:
    """The two functions compiled from the fields, as `dataclasses` compiles `__init__`: what
    runs is the dict display and keyword call one would write by hand, so the hottest writes
    (a busy agent's tool calls and steps) pay nothing for the derivation."""
    hints = type_hints(cast(type, record))
    folded = {name for group in packed.values() for name in group.fields}
    names = [f.name for f in fields(cast(Any, record))
             if f.init and f.name not in skip and f.name not in folded]
    scope: dict[str, object] = {"_record": record}
    expressions, decoded = {}, []
    for name in names:
        conversion = _conversion(hints[name])
        encode, decode = encoders.get(name, conversion.encode), conversion.decode
        scope[f"_e_{name}"], scope[f"_d_{name}"] = encode, decode
        expressions[name] = _call(conversion, encode, f"_e_{name}", f"r.{name}")
        decoded.append(f"{name}=" + _call(conversion, decode, f"_d_{name}", f"row[{name!r}]"))
    for column, group in packed.items():
        scope[f"_p_{column}"], scope[f"_u_{column}"] = group.encode, group.decode
        expressions[column] = f"_p_{column}(r)"
        decoded.append(f"**_u_{column}(row[{column!r}])")
    encoded = ", ".join(f"{column!r}: {expression}" for column, expression in expressions.items())
    source = (f"def to_row(r):\n    return {{{encoded}}}\n"
              f"def from_row(row):\n    return _record({', '.join(decoded)})\n")
    converters = dict(scope)
    exec(compile(source, f"<row codec of {record.__name__}>", "exec"), scope)  # noqa: S102
    return _Codec(cast(Callable[[R], RowValues], scope["to_row"]),
                  cast(Callable[[Row], R], scope["from_row"]), (*names, *packed),
                  converters, expressions)


@dataclass(frozen=True, slots=True)
class _Conversion:
    """How a field's type goes to its column and back (None: as it is); `optional` when the
    type admits None, which is NULL either way."""

    encode: Encoder | None = None
    decode: Decoder | None = None
    optional: bool = False


def _call(conversion: _Conversion, convert: object, name: str, value: str) -> str:
    """The expression converting `value` with the function bound to `name`."""
    if convert is None:
        return value
    if conversion.optional:
        return f"(None if (v := {value}) is None else {name}(v))"
    return f"{name}({value})"


def _conversion(hint: object) -> _Conversion:
    args = typing.get_args(hint)
    if type(None) in args:  # X | None
        (inner,) = [arg for arg in args if arg is not type(None)]
        found = _conversion(inner)
        return _Conversion(found.encode, found.decode, optional=True)
    if hint in (str, int):
        return _Conversion()
    if hint is bool:  # SQLite gives 0/1 back
        return _Conversion(decode=bool)
    if hint is float:
        return _Conversion(decode=float)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _Conversion(attrgetter("value"), hint)
    if hint is datetime:
        return _Conversion(iso, at)
    if hint in _PLAIN_JSON:  # the JSON text is the value: no walk
        return _Conversion(dump, _PLAIN_JSON[hint])
    return _Conversion(dump, lambda text: from_json(cast(Any, hint), load(text)))


def _tuple(text: str) -> tuple[object, ...]:
    return tuple(load(text))


_PLAIN_JSON: Mapping[object, Decoder] = {
    Mapping[str, object]: load, Mapping[str, str]: load, dict[str, object]: load,
    tuple[str, ...]: _tuple,
}
"""Nested types whose JSON document already is the field's value (strings, free mappings)."""

