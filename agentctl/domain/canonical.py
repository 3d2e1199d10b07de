"""The one canonical JSON: what every hash agentctl stores is taken over (the event log's
payloads, the frozen spec's digest, each record's digest in its event).

Keys sorted, no whitespace, text as UTF-8 (not `\\uXXXX` escapes), and only JSON's own values:
anything else is a TypeError, never its `str()` inside a hash. It is byte for byte the form the
record digests always used, so every digest stored by earlier versions still verifies; the
event log and the spec digest used to escape non-ASCII text, which changes nothing stored: an
event's hash covers its payload text as stored, and a run's spec digest is computed once, when
the run is created, and kept (tests/integration/test_canonical_form.py holds both to a home
written before).

A document of text, integers, booleans and nulls in dicts and lists (nearly every event
payload: two per tool call, and the seals a batch's first event carries, thousands of them) is
written by orjson, about six times faster; it writes such documents byte for byte as `json`
does, which a property test holds. Everything else, floats above all (orjson spells `1e-05` as
`0.00001`), takes `json`'s path.
"""

from __future__ import annotations

import hashlib
import json

import orjson

from agentctl._speedups.json_text import compiled
from agentctl.domain.serialize import sealed_before_json, sealed_json

_ENCODE = compiled(json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False))
_FLAT_VALUES = frozenset((str, int, bool, type(None)))  # exact types: no enums, no floats
_CONTAINERS = frozenset((dict, list))
_dumps, _SORTED = orjson.dumps, orjson.OPT_SORT_KEYS


def _without_floats(document: dict[object, object] | list[object]) -> bool:
    """Whether every value in `document`, at any depth, is text, an integer, a boolean, null,
    or a dict or list of them."""
    values = document.values() if type(document) is dict else document
    kinds = set(map(type, values))
    if kinds <= _FLAT_VALUES:
        return True
    if not kinds <= _FLAT_VALUES | _CONTAINERS:
        return False
    return all(_without_floats(value) for value in values  # type: ignore[arg-type]
               if type(value) in _CONTAINERS)


def canonical_json(document: object) -> str:
    """`document` (plain JSON: dicts, lists, tuples, strings, numbers, booleans, None) as its
    canonical text."""
    if type(document) is dict and _without_floats(document):
        try:
            return _dumps(document, option=_SORTED).decode()
        except TypeError:
            pass  # keys that are not text, integers past 64 bits, lone surrogates: json decides
    return _ENCODE(document)


def sha256_digest(document: object) -> str:
    """`sha256:<hex>` over the canonical UTF-8 text of a plain JSON document."""
    return "sha256:" + hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


def record_digest(record: object) -> str:
    """`sha256_digest` of a record's JSON document (DESIGN.md §4: camelCase keys, enum values,
    ISO times): what it says, not how a database stores it."""
    return sha256_digest(sealed_json(record))


def record_digest_before(record: object) -> str | None:
    """The digest the record was sealed under before its unmarked later fields existed
    (`serialize.LATER_UNMARKED`), or None when its type has none."""
    document = sealed_before_json(record)
    return None if document is None else sha256_digest(document)
