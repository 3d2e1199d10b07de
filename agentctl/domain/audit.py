"""What ties the records to the event log: a digest per record, carried by the event that
created it, and the rules `audit verify` checks them by.

The log is hash-chained, so an edited event is found; a record is bound to its event by
`digest`, so an edited record is found too (a verdict rewritten to SUCCESS, an artifact row
pointing at a replaced blob, a tool call whose denial vanished).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agentctl.domain.serialize import to_json
from agentctl.domain.step import ToolCall


def digest(record: object) -> str:
    """sha256 over the record's canonical JSON: what it says, not how a database stores it."""
    canonical = json.dumps(to_json(record), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def call_digest(call: ToolCall) -> str:
    """A tool call's digest from what it decided and answered; cheaper than `digest` (a busy
    agent makes thousands) and covering what matters: a denial cannot be edited away."""
    result = call.result
    material = "\x1f".join((
        call.tool_call_id, call.tool_name, call.arguments_json, call.decision.value,
        call.matched_rule or "", call.denial_reason or "", call.approved_by or "",
        "" if result is None else
        f"{result.outcome.value}\x1e{result.exit_code}\x1e{result.error}\x1e{result.output}"))
    return "sha256:" + hashlib.sha256(material.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True, slots=True)
class Problem:
    """A record that does not match what the log says about it."""

    what: str  # e.g. "verdict verdict_01..."
    detail: str


@dataclass(frozen=True, slots=True)
class Claim:
    """What an event says a record is: its id, the kind, and the digest (None for events written
    before records carried digests: then only the record's existence is checked)."""

    kind: str
    record_id: str
    digest: str | None


def unmatched(records: Mapping[tuple[str, str], str], claims: Iterable[Claim]) -> list[Problem]:
    """Records (kind, id) -> digest against the events' claims: a record no event created, a
    record whose content is not what its event says, an event whose record is gone."""
    problems: list[Problem] = []
    claimed: dict[tuple[str, str], Claim] = {}
    for made in claims:
        claimed[(made.kind, made.record_id)] = made
    for key, actual in records.items():
        claim = claimed.get(key)
        if claim is None:
            problems.append(Problem(f"{key[0]} {key[1]}", "no event records its creation"))
        elif claim.digest is not None and claim.digest != actual:
            problems.append(Problem(f"{key[0]} {key[1]}",
                                    "its content does not match the event that created it "
                                    "(edited)"))
    for key in claimed.keys() - records.keys():
        problems.append(Problem(f"{key[0]} {key[1]}", "an event records it, but it is gone"))
    return sorted(problems, key=lambda problem: problem.what)
