"""`audit verify` and `audit sign` on this store: prove that the records, the event log and its signed
checkpoint still say the same thing, or name what differs.

One pass over the chain re-hashes every event and collects what each says about the records it
created; then every stored record is digested and compared, every artifact's blob re-hashed,
and the chain's end checked against the signed checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agentctl.domain.audit import (
    SEALS,
    Checkpoint,
    CheckpointState,
    Claim,
    Problem,
    call_row_digest,
    checkpoint_problem,
    checkpoint_state,
    claims_of,
    digest,
    digest_before,
    row_digest,
    run_status_problems,
    seal_problems,
    seals_of,
    unmatched,
)
from agentctl.domain.audit_report import AuditReport
from agentctl.domain.errors import AgentctlError, BadInput, IntegrityError
from agentctl.domain.events import find_chain_breaks
from agentctl.domain.transitions import TERMINAL_RUN
from agentctl.store.seal_rules import (
    LEASE_SEAL,
    NOT_RECORDS,
    final_lease,
    optional_positions,
    sealed_columns,
    without_unset,
)
from agentctl.store.views import Views

if TYPE_CHECKING:
    from agentctl.home import Home
    from agentctl.store.blobs import BlobStore
    from agentctl.store.checkpoint import AuditSigner
from agentctl.domain.artifact import Artifact
from agentctl.store.rows import RowMapping, evidence
from agentctl.store.rows import runs as rows


class AuditedStore(Protocol):
    """What the audit reads of a `storage.Store` (which imports this module for `audit()`)."""

    @property
    def home(self) -> Home: ...
    @property
    def signer(self) -> AuditSigner: ...
    @property
    def blobs(self) -> BlobStore: ...


def verify_store(store: AuditedStore) -> AuditReport:
    """Everything `audit verify` checks. BadInput when there is no store at all to check."""
    home, signer = store.home, store.signer
    database = home.sqlite_path
    checkpoint = signer.read()
    if database is not None and not database.exists():
        if checkpoint is not None:
            raise IntegrityError(f"the log is gone: the database {database} is gone, but the "
                                 f"signed checkpoint records {checkpoint.seq} events")
        if signer.key() is not None:  # a home that had a store: its key outlived the log
            raise IntegrityError(f"the log is gone: the database {database} (and its signed "
                                 "checkpoint) are gone, but the home's audit key remains")
        raise BadInput(f"no agentctl store at {home.root}: nothing to verify (expected a "
                       "home agentctl has used; pass --home or set AGENTCTL_HOME)")
    claims: list[Claim] = []
    requested: list[str] = []  # parsed only if a call has no later claim (it never finished)
    completed: dict[str, str] = {}
    signed_seq = checkpoint.seq if checkpoint else -1
    signed_hash: str | None = None
    seals: dict[tuple[str, str], str] = {}
    count = last_seq = 0
    born_sealed = False

    def reading(chain: Iterable[tuple]) -> Iterator[tuple]:  # type: ignore[type-arg]
        nonlocal signed_hash, count, last_seq, born_sealed
        for row in chain:
            yield row
            seq, type_, _task, run_id, _attempt, _step, payload_json, *_rest, stored_hash = row
            count, last_seq = count + 1, seq
            if seq == signed_seq:
                signed_hash = stored_hash
            sealing = _SEALING in payload_json  # a transaction's first event: parsed for its seals
            if type_ == "ToolCallRequested" and not sealing:
                requested.append(payload_json)
                continue
            payload = json.loads(payload_json)
            if sealing:
                seals.update(((table, key), found) for table, key, found in seals_of(payload))
            born_sealed = born_sealed or (seq == 1 and sealing)
            if type_ == "ToolCallRequested":
                requested.append(payload_json)
                continue
            claims.extend(claims_of(type_, payload))
            if type_ == "RunCompleted" and run_id is not None:
                completed[run_id] = str(payload.get("status"))

    with Views(home) as views, views.snapshot():  # the checkpoint, read first, never leads it
        head = views.event_head()
        breaks = find_chain_breaks(reading(views.event_chain()), head)
        # a log sealed from its start seals every tool call row whole: the older, narrower
        # per-call digest is then left out (it costs as much as the seals of a busy run)
        stored = _stored_records(store, views, calls=not born_sealed)
        sealed_rows, leases = _row_seals(views)
    if born_sealed:
        claims = [claim for claim in claims if claim.kind != "tool call"]
    claimed = {(c.kind, c.record_id) for c in claims}
    if any(key[0] == "tool call" and key not in claimed for key in stored.digests):
        claims[:0] = [c for text in requested
                      for c in claims_of("ToolCallRequested", json.loads(text))]
    head_seq = last_seq
    state = checkpoint_state(signer.key(), checkpoint, signed_hash, head_seq)
    problem = checkpoint_problem(state, checkpoint, head_seq)
    problems = [
        *([problem] if problem else []),
        *stored.problems,
        *unmatched(stored.digests, claims, stored.labels, stored.earlier),
        *run_status_problems(stored.statuses, completed,
                             frozenset(s.value for s in TERMINAL_RUN)),
        *seal_problems(sealed_rows, _sealed_kind(seals, leases=False), strict=born_sealed),
        # an attempt that ended before final leases were sealed has none: nothing to compare
        *seal_problems(leases, _sealed_kind(seals, leases=True), strict=False),
    ]
    return AuditReport(events=count, head=head, checkpoint=checkpoint,
                       checkpoint_state=state, breaks=breaks, problems=problems,
                       records=len(sealed_rows) if born_sealed else len(stored.digests))


_SEALING = f'"{SEALS}":{{'


def _sealed_kind(seals: dict[tuple[str, str], str], *, leases: bool
                 ) -> dict[tuple[str, str], str]:
    """The seals of records, or (`leases`) those of ended attempts' final lease bookkeeping."""
    return {key: found for key, found in seals.items() if (key[0] == LEASE_SEAL) is leases}


def _row_seals(views: Views) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """Every stored row of every record table, (table, id) -> its seal as stored now, and every
    ended attempt's final lease bookkeeping, ("attempt_lease", id) -> its seal. Read from the
    database as it is, without the ORM: the key is each table's first column."""
    found: dict[tuple[str, str], str] = {}
    leases: dict[tuple[str, str], str] = {}
    for name in views.table_names():
        if name in NOT_RECORDS:
            continue
        columns, rows = views.everything(name)  # names the database gave
        if not rows:
            continue
        sealed = sealed_columns(name, columns)
        pick = [columns.index(column) for column in sealed]
        optional = optional_positions(name, sealed)
        flags = [at for at, index in enumerate(pick) if isinstance(rows[0][index], bool)]
        for row in rows:
            values = [row[index] for index in pick]
            for at in flags:  # PostgreSQL gives a boolean, SQLite (and the writer's seal) 0/1
                values[at] = int(values[at])
            found[(name, str(row[0]))] = row_digest(without_unset(values, optional))
            if name == "attempt":
                lease = final_lease(dict(zip(columns, row, strict=True)))
                if lease is not None:
                    leases[(LEASE_SEAL, str(row[0]))] = row_digest(lease)
    return found, leases


@dataclass(slots=True)
class _Stored:
    digests: dict[tuple[str, str], str] = field(default_factory=dict)
    earlier: dict[tuple[str, str], str] = field(default_factory=dict)  # see `digest_before`
    labels: dict[tuple[str, str], str] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def _stored_records(store: AuditedStore, views: Views, *, calls: bool) -> _Stored:
    """The digest of every record an event vouches for, run statuses, and what does not even
    decode, or whose blob is not the content its row names."""

    stored = _Stored()
    tables: tuple[tuple[str, RowMapping[Any], Callable[[Any], str]], ...] = (
        ("verdict", evidence.VERDICTS, digest),
        ("patch", evidence.PATCHES, digest),
        ("verification", evidence.VERIFICATIONS, digest),
        ("judgement", evidence.JUDGEMENTS, digest),
        ("approval", evidence.APPROVALS, digest),
        ("pull request", evidence.PULL_REQUESTS, digest),
        ("artifact", rows.ARTIFACTS, digest),
    )
    for kind, mapping, digest_of in tables:
        for row in views.all_rows(mapping.table):
            record_id = str(row[mapping.key])
            try:
                record: Any = mapping.from_row(row)
            except (AgentctlError, ValueError, KeyError, TypeError) as error:
                stored.problems.append(Problem(f"{kind} {record_id}", f"does not decode (edited): "
                                                                      f"{error}"))
                continue
            stored.digests[(kind, record_id)] = digest_of(record)
            before = digest_before(record)
            if before is not None:
                stored.earlier[(kind, record_id)] = before
            if isinstance(record, Artifact):
                stored.labels[(kind, record_id)] = record.name
                problem = store.blobs.verify(record.uri, record.sha256)
                if problem:
                    stored.problems.append(Problem(f"artifact {record_id} ({record.name})",
                                                   problem))
    if calls:
        for row in views.call_digest_rows():
            try:
                stored.digests[("tool call", str(row["tool_call_id"]))] = call_row_digest(row)
            except (ValueError, KeyError, TypeError) as error:
                stored.problems.append(Problem(f"tool call {row['tool_call_id']}",
                                               f"does not decode (edited): {error}"))
    stored.statuses = views.run_statuses()
    return stored


def sign_store(store: AuditedStore) -> Checkpoint:
    """Start signing a home that predates it (or whose checkpoint file was lost): only over a
    log that otherwise verifies, so a forgery is never signed. An explicit act of the user."""
    report = verify_store(store)
    state = report.checkpoint_state
    others = [p for p in report.problems if p.what != "checkpoint"]
    if report.breaks or others or state not in _SIGNABLE:
        raise IntegrityError(f"not signing a log that does not verify: {report.failure()}")
    store.signer.create_key()
    seq, head_hash = report.head or (0, "")
    store.signer.advance(seq, head_hash, force=True)
    signed = store.signer.read()
    assert signed is not None
    return signed


_SIGNABLE = frozenset({CheckpointState.UNSIGNED, CheckpointState.EMPTY, CheckpointState.VERIFIED})
