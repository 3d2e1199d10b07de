"""What the run pipeline needs from storage, as two Protocols, and the values that cross them.

`AttemptLedger` is the one writer of an attempt: every step, tool call, artifact, record and the
attempt's end go through it, fenced by the attempt's lease. `RunQueue` is the rest of a run's
life around its attempts: leasing, heartbeats, reaping, cancellation requests, reading.
`services.lifecycle.ledger` and `services.lifecycle.queue` implement both on the storage port
(`unit_of_work`), so they run unchanged on the real store and on the in-memory one (`agentctl.testing`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol, TypeVar

from agentctl._speedups.fast_init import fast_init
from agentctl.domain import ids
from agentctl.domain.artifact import Artifact
from agentctl.domain.blob import StoredBlob
from agentctl.domain.command_rules import GuardDecision
from agentctl.domain.ending import AttemptEnd
from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    EventType,
    RedactionStatus,
    RunStatus,
    StepStatus,
    StepType,
    ToolDecision,
)
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.run import Run
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.domain.verification import VerificationReport
from agentctl.services.unit_of_work import RunRecord as RunRecord  # the port's, named here too

# The records a step may produce besides its artifacts; each is stored with its event.
Produced = Patch | VerificationReport | JudgeReport


@dataclass(frozen=True, slots=True)
class ApprovalQuestion:
    """An `ask` call waiting for a person: which run, which step of its tree, what it does."""

    run_id: str
    step: int  # the number the call's step gets in `run show --tree`
    tool: str
    arguments: Mapping[str, object]
    decision: GuardDecision


# Asks a person whether an `ask` call may run: the approver's name, or None for no.
Approver = Callable[[ApprovalQuestion], "str | None"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Lease:
    """What a worker holds while it executes an attempt; every write it makes carries this."""

    run_id: str
    task_id: str
    attempt_id: str
    attempt_number: int
    lease_id: str
    worker_id: str
    ttl_seconds: float


@dataclass(frozen=True, slots=True)
class NewArtifact:
    """Content already in the blob store, to be recorded as an artifact of the step that made it."""

    type: ArtifactType
    name: str
    blob: StoredBlob
    visibility: ArtifactVisibility
    redaction_status: RedactionStatus
    metadata: Mapping[str, str] = field(default_factory=dict)
    artifact_id: str = field(default_factory=lambda: ids.new_id("artifact"))


@dataclass(frozen=True, slots=True, kw_only=True)
class StepEnd:
    """How a step ended and what it produced."""

    status: StepStatus = StepStatus.SUCCEEDED
    failure_code: str | None = None
    attributes: Mapping[str, object] = field(default_factory=dict)
    artifacts: Sequence[NewArtifact] = ()
    produced: Sequence[Produced] = ()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CallRequest:
    """A tool call as the agent asked for it and the guard decided it."""

    tool: str
    arguments_json: str  # redacted
    decision: ToolDecision
    matched_rule: str | None
    denial_reason: str | None
    requested_at: datetime
    approved_by: str | None = None


@dataclass(frozen=True, slots=True)
class Heartbeat:
    cancel: tuple[str, str] | None  # (who, why) when someone asked to cancel the run


class Blobs(Protocol):
    """The content-addressed artifact store, as the pipeline writes to it."""

    def put_bytes(self, data: bytes, /) -> StoredBlob: ...
    def put_file(self, path: Path, /, *, move: bool = False) -> StoredBlob: ...
    def put_written(self, write: Callable[[Path], T], /) -> tuple[StoredBlob, T]:
        """A blob `write` makes in a fresh staging file beside the store, moved in once
        written; with what `write` returned. One write, so a retry makes the whole file again."""
        ...

    def open_chunks(self, uri: str, /) -> Iterator[bytes]: ...
    def path_for(self, uri: str, /) -> Path:
        """A local file that holds the blob, for tools that read files (git apply)."""
        ...

    def verify(self, uri: str, sha256: str, /) -> str | None:
        """None when the blob is there and hashes to `sha256`, else what is wrong."""
        ...


class AttemptLedger(Protocol):
    """The one writer of an attempt. A write after the lease was lost raises LeaseLost."""

    @property
    def lease(self) -> Lease: ...
    @property
    def spec_digest(self) -> str: ...
    @property
    def blobs(self) -> Blobs: ...
    @property
    def last_step_number(self) -> int:
        """The latest step's number in the attempt, as the run tree shows it."""
        ...

    def now(self) -> datetime: ...
    def activate(self, directory: str) -> Run: ...
    def advance(self, target: RunStatus, event: EventType, **payload: object) -> None: ...
    def begin_step(self, type_: StepType, title: str, *, live: bool) -> Step: ...
    def end_step(self, step: Step, end: StepEnd) -> list[Artifact]: ...
    def finished_call(self, request: CallRequest, result: ToolResult | None, *,
                      attributes: Mapping[str, object] | None = None) -> ToolCall: ...
    def begin_call(self, request: CallRequest) -> tuple[Step, ToolCall]: ...
    def end_call(self, step: Step, call: ToolCall, result: ToolResult,
                 artifacts: Sequence[NewArtifact] = (), *,
                 attributes: Mapping[str, object] | None = None) -> ToolCall: ...
    def flush(self) -> None: ...
    def end(self, end: AttemptEnd) -> Run | None: ...


class RunQueue(Protocol):
    """A run's life around its attempts."""

    def now(self) -> datetime: ...
    def lease(self, *, worker_id: str, ttl_seconds: float,
              run_id: str | None = None) -> Lease | None: ...
    def heartbeat(self, lease: Lease) -> Heartbeat: ...
    def reap_expired(self) -> list[Run]: ...
    def run(self, run_id: str) -> Run: ...
    def cancel_request(self, run_id: str) -> tuple[str, str] | None: ...
    def waiting(self) -> bool: ...
    def ledger(self, lease: Lease, spec_digest: str, *,
               blobs: Callable[[Blobs], Blobs] | None = None) -> AttemptLedger:
        """The attempt's writer; `blobs` wraps the store's artifact store for it."""
        ...
    def record(self, run_id: str) -> RunRecord: ...
    def outage_errors(self) -> tuple[type[BaseException], ...]: ...
    def outage_text(self, error: BaseException) -> str: ...


@dataclass(frozen=True, slots=True)
class StepDone:
    """A step that ended, for a person watching: what it was, how it ended, how long it took."""

    type: StepType
    title: str
    status: StepStatus
    seconds: float
    detail: str | None = None  # a failure's summary, a check's test counts


class RunObserver(Protocol):
    """Who watches a run as it goes (the terminal's progress lines)."""

    def attempt(self, number: int) -> None: ...
    def step_done(self, done: StepDone) -> None: ...
    def notice(self, text: str) -> None:
        """A warning the person should read before the run goes on (one line)."""
