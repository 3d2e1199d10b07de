"""What ties the records to the event log: a digest per record, carried by the event that
created it, and the rules `audit verify` checks them by.

The log is hash-chained, so an edited event is found; a record is bound to its event by
`digest`, so an edited record is found too (a verdict rewritten to SUCCESS, an artifact row
pointing at a replaced blob, a tool call whose denial vanished). The chain's head is
checkpointed and signed (HMAC) with a key kept outside the database, so what the chain alone
cannot show is found as well: events cut from the end, all events deleted, the database
deleted, or the whole chain recomputed after an edit.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from agentctl.domain.canonical import record_digest, record_digest_before
from agentctl.domain.step import ToolCall


def digest(record: object) -> str:
    """sha256 over the record's canonical JSON: what it says, not how a database stores it."""
    return record_digest(record)


def digest_before(record: object) -> str | None:
    """The digest an event made before fields were added to the record's type unmarked holds
    for it (`serialize.LATER_UNMARKED`); None when its type has no such field."""
    return record_digest_before(record)


def call_digest(call: ToolCall) -> str:
    """A tool call's digest from what it decided and answered; cheaper than `digest` (a busy
    agent makes thousands) and covering what matters: a denial cannot be edited away."""
    result = call.result
    answered = "" if result is None else \
        f"{result.outcome.value}\x1e{result.exit_code}\x1e{result.error}\x1e{result.output}"
    return _call_digest(call.tool_call_id, call.tool_name, call.arguments_json,
                        call.decision.value, call.matched_rule, call.denial_reason,
                        call.approved_by, answered)


def call_row_digest(row: Mapping[str, object]) -> str:
    """`call_digest` of a stored tool_call row, without decoding the whole record: `audit
    verify` digests every call of every run."""
    answered = ""
    if row["result"] is not None:
        result = json.loads(str(row["result"]))
        answered = f"{result['outcome']}\x1e{result['exitCode']}\x1e{result['error']}\x1e" \
                   f"{result['output']}"
    return _call_digest(str(row["tool_call_id"]), str(row["tool_name"]),
                        str(row["arguments_json"]), str(row["decision"]),
                        _text(row["matched_rule"]), _text(row["denial_reason"]),
                        _text(row["approved_by"]), answered)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _call_digest(call_id: str, tool: str, arguments: str, decision: str, rule: str | None,
                 denial: str | None, approver: str | None, answered: str) -> str:
    material = "\x1f".join((call_id, tool, arguments, decision, rule or "", denial or "",
                            approver or "", answered))
    return "sha256:" + hashlib.sha256(material.encode("utf-8", "surrogateescape")).hexdigest()


SEALS = "sealed"  # the payload key: {table: {record id: row digest}}


def row_digest(values: tuple[object, ...]) -> str:
    """A stored row's seal: every sealed column's value (str, int, float or None), in the
    schema's column order. `repr` of the tuple is an unambiguous encoding built in C, twice as
    fast as JSON: `audit verify` seals every row of every run. 128 bits keep the seals small."""
    return hashlib.sha256(repr(values).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def seals_of(payload: Mapping[str, object]) -> Iterator[tuple[str, str, str]]:
    """(table, record id, row digest) for every row an event seals."""
    sealed = payload.get(SEALS)
    if not isinstance(sealed, Mapping):
        return
    for table, rows in sealed.items():
        if isinstance(rows, Mapping):
            for record_id, found in rows.items():
                yield str(table), str(record_id), str(found)


def record_name(table: str, record_id: str) -> str:
    """How a problem names a row: `tool call toolcall_01...`."""
    return f"{table.replace('_', ' ')} {record_id}"


def seal_problems(rows: Mapping[tuple[str, str], str], seals: Mapping[tuple[str, str], str],
                  *, strict: bool) -> list[Problem]:
    """Every stored row (table, id) -> its digest now, against the last seal the log holds for
    it: an edited field, a row no event sealed (reported when the log was sealed from its first
    event; a home from before sealing has older rows nothing vouches for), a sealed row gone."""
    problems = []
    for key, actual in rows.items():
        sealed = seals.get(key)
        if sealed is None:
            if strict:
                problems.append(Problem(record_name(*key), "no event seals its content "
                                                           "(inserted behind the log)"))
        elif sealed != actual:
            problems.append(Problem(record_name(*key), "its content does not match the event "
                                                       "that last sealed it (edited)"))
    for key in seals.keys() - rows.keys():
        problems.append(Problem(record_name(*key), "an event seals it, but it is gone"))
    return sorted(problems, key=lambda problem: problem.what)


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


def unmatched(records: Mapping[tuple[str, str], str], claims: Iterable[Claim],
              labels: Mapping[tuple[str, str], str] | None = None,
              earlier: Mapping[tuple[str, str], str] | None = None) -> list[Problem]:
    """Records (kind, id) -> digest against the events' claims: a record no event created, a
    record whose content is not what its event says, an event whose record is gone. `labels`
    add a name to what is reported (an artifact's file name); `earlier` is the digest a record
    had before fields were added to its type unmarked, which its event may hold instead."""
    problems: list[Problem] = []
    claimed: dict[tuple[str, str], Claim] = {}
    for made in claims:
        claimed[(made.kind, made.record_id)] = made

    def what(key: tuple[str, str]) -> str:
        label = (labels or {}).get(key)
        return f"{key[0]} {key[1]}" + (f" ({label})" if label else "")

    for key, actual in records.items():
        claim = claimed.get(key)
        if claim is None:
            problems.append(Problem(what(key), "no event records its creation"))
        elif claim.digest is not None and claim.digest != actual \
                and claim.digest != (earlier or {}).get(key):
            problems.append(Problem(what(key), "its content does not match the event that "
                                               "created it (edited)"))
    for key in claimed.keys() - records.keys():
        problems.append(Problem(what(key), "an event records it, but it is gone"))
    return sorted(problems, key=lambda problem: problem.what)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The chain head at some moment, signed: `seq` events existed and the last hashed `hash`."""

    seq: int
    hash: str
    mac: str


def sign(key: bytes, seq: int, head_hash: str) -> Checkpoint:
    mac = hmac.new(key, f"agentctl-audit-v1:{seq}:{head_hash}".encode(), hashlib.sha256)
    return Checkpoint(seq=seq, hash=head_hash, mac=mac.hexdigest())


class CheckpointState(Enum):
    VERIFIED = "verified"
    EMPTY = "empty"  # no events yet, nothing to vouch for
    UNSIGNED = "unsigned"  # events, but no key or no checkpoint vouches for them
    KEY_GONE = "key gone"
    FORGED = "forged"
    TRUNCATED = "truncated"
    REWRITTEN = "rewritten"

    @property
    def sound(self) -> bool:
        return self in (CheckpointState.VERIFIED, CheckpointState.EMPTY)


def checkpoint_state(key: bytes | None, checkpoint: Checkpoint | None,
                     stored_hash: str | None, head_seq: int) -> CheckpointState:
    """The signed checkpoint against the stored chain (`stored_hash`: the hash stored for the
    event at the checkpoint's seq, None if there is none).

    With events but no key or no checkpoint, nothing vouches for the log's end: unsound too,
    since deleting the checkpoint is how one would hide a truncation.
    """
    if checkpoint is None:
        return CheckpointState.EMPTY if head_seq == 0 else CheckpointState.UNSIGNED
    if key is None:
        return CheckpointState.KEY_GONE
    if not hmac.compare_digest(sign(key, checkpoint.seq, checkpoint.hash).mac, checkpoint.mac):
        return CheckpointState.FORGED
    if checkpoint.seq > head_seq:
        return CheckpointState.TRUNCATED
    if checkpoint.seq and stored_hash != checkpoint.hash:
        return CheckpointState.REWRITTEN
    return CheckpointState.VERIFIED


def checkpoint_problem(state: CheckpointState, checkpoint: Checkpoint | None,
                       head_seq: int) -> Problem | None:
    at = checkpoint.seq if checkpoint else 0
    detail = {
        CheckpointState.UNSIGNED: f"no signed checkpoint vouches for the {head_seq} events "
                                  "(deleted, or the home predates signing: `agentctl audit "
                                  "sign` signs the current head once you trust it)",
        CheckpointState.KEY_GONE: "the audit key is gone, so the signed checkpoint cannot be "
                                  "checked",
        CheckpointState.FORGED: "its signature does not verify (forged, or the key was replaced)",
        CheckpointState.TRUNCATED: f"the log ends at event {head_seq} but the signed checkpoint "
                                   f"records event {at}: events were deleted",
        CheckpointState.REWRITTEN: f"event {at} is not the event the checkpoint signed: the "
                                   "chain was rewritten",
    }.get(state)
    return None if detail is None else Problem("checkpoint", detail)


# Event payload keys that name a record and the digest of its content, by event type.
_RECORDS: Mapping[str, tuple[tuple[str, str, str | None], ...]] = {
    "VerdictDecided": (("verdict", "verdictId", "verdictDigest"),),
    "PatchProduced": (("patch", "patchId", "patchDigest"),),
    "VerifierCompleted": (("verification", "verificationReportId", "verificationDigest"),),
    "JudgeCompleted": (("judgement", "judgeReportId", "judgeDigest"),),
    "ApprovalRecorded": (("approval", "approvalId", "approvalDigest"),),
    "PrCreated": (("pull request", "prId", "pullRequestDigest"),),
    "PrUpdated": (("pull request", "prId", "pullRequestDigest"),),
    "PrStateChanged": (("pull request", "prId", "pullRequestDigest"),),
    "ToolCallRequested": (("tool call", "toolCallId", None),),
    "ToolCallDenied": (("tool call", "toolCallId", "toolCallDigest"),),
    "ToolCallCompleted": (("tool call", "toolCallId", "toolCallDigest"),),
}


def claims_of(event_type: str, payload: Mapping[str, object]) -> Iterator[Claim]:
    """What one event says about the records it created (later claims on a record win)."""
    for kind, id_key, digest_key in _RECORDS.get(event_type, ()):
        record_id = payload.get(id_key)
        if isinstance(record_id, str):
            found = payload.get(digest_key) if digest_key else None
            yield Claim(kind, record_id, found if isinstance(found, str) else None)
    artifacts = payload.get("artifactDigests")
    if isinstance(artifacts, Mapping):
        for artifact_id, found in artifacts.items():
            yield Claim("artifact", str(artifact_id), str(found))


def run_status_problems(statuses: Mapping[str, str], completed: Mapping[str, str],
                        terminal: frozenset[str]) -> list[Problem]:
    """Each run's stored status against its last RunCompleted event: a run rewritten to another
    ending, or ended with no event saying so."""
    problems = []
    for run_id, status in sorted(statuses.items()):
        said = completed.get(run_id)
        if said is None and status in terminal:
            problems.append(Problem(f"run {run_id}", f"is {status}, but no RunCompleted event "
                                                     "says so (edited)"))
        elif said is not None and said != status:
            problems.append(Problem(f"run {run_id}", f"is {status}, but its RunCompleted event "
                                                     f"says {said} (edited)"))
    return problems
