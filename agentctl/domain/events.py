"""The append-only event log: each event carries the hash of the one before it.

Editing or deleting any stored event breaks the chain at that point, which `audit verify` finds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from agentctl._speedups.fast_init import fast_init
from agentctl.domain.canonical import canonical_json
from agentctl.domain.clock import iso_text
from agentctl.domain.enums import EventType

GENESIS_HASH = "0" * 64


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NewEvent:
    """An event about to be appended: the store assigns its sequence number and hashes."""

    type: EventType
    created_at: datetime
    task_id: str | None = None
    run_id: str | None = None
    attempt_id: str | None = None
    step_id: str | None = None
    payload: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    seq: int
    type: EventType
    task_id: str | None
    run_id: str | None
    attempt_id: str | None
    step_id: str | None
    payload: Mapping[str, object]
    created_at: datetime
    prev_hash: str
    hash: str


StoredEvent = tuple[str, str | None, str | None, str | None, str | None, str, str]
"""An event's stored fields but its place in the chain: (type, task, run, attempt, step, payload
JSON, created_at text)."""


def event_hash(
    *, seq: int, type: str, task_id: str | None, run_id: str | None, attempt_id: str | None,
    step_id: str | None, payload_json: str, created_at: str, prev_hash: str,
) -> str:
    """sha256 over the previous hash and every stored field, in a fixed order."""
    return chain_hash(prev_hash, seq, type, task_id, run_id, attempt_id, step_id, payload_json,
                      created_at)


def chain_hash(prev_hash: str, seq: int, type: str, task_id: str | None, run_id: str | None,
               attempt_id: str | None, step_id: str | None, payload_json: str,
               created_at: str) -> str:
    """`event_hash` with positional arguments: the writer hashes every event of a batch."""
    material = "\x1f".join((
        prev_hash, str(seq), type, task_id or "", run_id or "", attempt_id or "", step_id or "",
        payload_json, created_at,
    ))
    return hashlib.sha256(material.encode()).hexdigest()


def stored_form(event: NewEvent) -> StoredEvent:
    """The event's fields exactly as they are to be stored and hashed, the payload as its
    canonical JSON (events written before the one form escaped non-ASCII text; a hash covers
    the text stored, so they verify as they are). Taken when the event is appended, so a batch
    waits as text rather than as records."""
    return (event.type.value, event.task_id, event.run_id, event.attempt_id, event.step_id,
            canonical_json(event.payload), iso_text(event.created_at))


def hash_new_event(event: NewEvent, *, seq: int, prev_hash: str) -> tuple[str, str, str]:
    """(payload json, created_at text, hash) exactly as they are to be stored."""
    type_, task, run, attempt, step, payload_json, created_at = stored_form(event)
    digest = chain_hash(prev_hash, seq, type_, task, run, attempt, step, payload_json,
                        created_at)
    return payload_json, created_at, digest


@dataclass(frozen=True, slots=True)
class ChainBreak:
    seq: int
    problem: str


def find_chain_breaks(
    rows: Iterable[tuple[int, str, str | None, str | None, str | None, str | None, str, str, str,
                         str]],
    head: tuple[int, str] | None,
) -> list[ChainBreak]:
    """Check stored rows (seq, type, task, run, attempt, step, payload, created, prev, hash),
    streamed: one pass, nothing kept."""
    breaks: list[ChainBreak] = []
    prev_hash, prev_seq, any_rows = GENESIS_HASH, 0, False
    for seq, type_, task, run, attempt, step, payload, created, stored_prev, stored_hash in rows:
        if seq != prev_seq + 1:
            breaks.append(ChainBreak(seq, f"events {prev_seq + 1}..{seq - 1} are missing"))
        if stored_prev != prev_hash:
            breaks.append(ChainBreak(seq, "prev_hash does not match the previous event"))
        expected = event_hash(
            seq=seq, type=type_, task_id=task, run_id=run, attempt_id=attempt, step_id=step,
            payload_json=payload, created_at=created, prev_hash=stored_prev,
        )
        if expected != stored_hash:
            breaks.append(ChainBreak(seq, "content does not match its hash (edited)"))
        prev_hash, prev_seq, any_rows = stored_hash, seq, True
    if head is None and any_rows:
        breaks.append(ChainBreak(prev_seq, "the log's head record is missing (deleted)"))
    elif head is not None and head != (prev_seq, prev_hash):
        breaks.append(ChainBreak(head[0], f"the log ends at event {prev_seq} but its head "
                                          f"records event {head[0]} (events deleted at the end)"))
    return breaks
