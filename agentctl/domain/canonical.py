"""The one canonical JSON: what every hash agentctl stores is taken over (the event log's
payloads, the frozen spec's digest, each record's digest in its event).

Keys sorted, no whitespace, text as UTF-8 (not `\\uXXXX` escapes), and only JSON's own values:
anything else is a TypeError, never its `str()` inside a hash. It is byte for byte the form the
record digests always used, so every digest stored by earlier versions still verifies; the
event log and the spec digest used to escape non-ASCII text, which changes nothing stored: an
event's hash covers its payload text as stored, and a run's spec digest is computed once, when
the run is created, and kept (tests/integration/test_canonical_form.py holds both to a home
written before).
"""

from __future__ import annotations

import hashlib
import json

from agentctl.domain.json_text import compiled
from agentctl.domain.serialize import to_json

_ENCODE = compiled(json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def canonical_json(document: object) -> str:
    """`document` (plain JSON: dicts, lists, tuples, strings, numbers, booleans, None) as its
    canonical text."""
    return _ENCODE(document)


def sha256_digest(document: object) -> str:
    """`sha256:<hex>` over the canonical UTF-8 text of a plain JSON document."""
    return "sha256:" + hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


def record_digest(record: object) -> str:
    """`sha256_digest` of a record's JSON document (DESIGN.md §4: camelCase keys, enum values,
    ISO times): what it says, not how a database stores it."""
    return sha256_digest(to_json(record))
