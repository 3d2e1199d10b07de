"""The storage port: what every use case needs from a store, and nothing of how one is built.

A use case takes the part of a `Storage` it uses (a narrow port: a Protocol beside it listing
those members, composed from its callees' where it calls other use cases; any `Storage` is one)
and writes through one `UnitOfWork` per transaction: repositories whose `save` is a
compare-and-set on the status the record was read with, `fence` (the attempt still holds its
lease), claims of queued runs and expired leases, and the event log, all landing together or
not at all. Reads that need no transaction go through `Storage.reads()`.

`agentctl.store` implements it on SQLite and PostgreSQL; `agentctl.testing` keeps it in memory.
Both pass the same contract tests (tests/contract), so the use cases exist once.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from types import TracebackType
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol, Self, TypeVar

from agentctl.domain.artifact import Artifact
from agentctl.domain.enums import RunStatus, TaskStatus
from agentctl.domain.events import Event, NewEvent
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport

if TYPE_CHECKING:
    from pathlib import Path

    from agentctl.domain.audit import Checkpoint
    from agentctl.domain.audit_report import AuditReport
    from agentctl.services.ports import Blobs

R = TypeVar("R")
IdKind = Literal["task", "session", "run", "artifact"]


class Repository(Protocol[R]):
    """The records of one type inside a unit of work."""

    def add(self, record: R) -> None: ...
    def add_many(self, records: Sequence[R]) -> None: ...
    def get(self, identifier: str) -> R: ...  # NotFound if there is none
    def find(self, order_by: str | None = None, *, status: StrEnum | None = None,
             **equals: str | int) -> list[R]:
        """The records whose columns equal these ids or numbers (and status, as its enum)."""
        ...

    def save(self, record: R, *, expected_status: StrEnum | None = None) -> None:
        """Write `record`; with `expected_status`, only if the stored one still has that status
        (IllegalTransition otherwise): two writers that both may move a record cannot both."""
        ...


class Events(Protocol):
    """The hash-chained event log: appended events land with the transaction's records."""

    def append(self, *events: NewEvent) -> None: ...
    def append_many(self, events: Sequence[NewEvent]) -> None: ...


class Pending(Protocol):
    """Inserts held for a later unit of work (the attempt ledger's batch of a busy agent's
    steps, tool calls and events), in whatever form the store writes them fastest: the SQL
    store encodes each as it is added, so thousands wait as plain rows rather than records."""

    def add_steps(self, steps: Sequence[Step]) -> None: ...
    def add_tool_calls(self, calls: Sequence[ToolCall]) -> None: ...
    def add_call(self, step: Step, call: ToolCall, events: Sequence[NewEvent]) -> None:
        """One finished tool call: its step, its record and its events (the hot path)."""
    def add_artifacts(self, artifacts: Sequence[Artifact]) -> None: ...
    def append_events(self, events: Sequence[NewEvent]) -> None: ...


class UnitOfWork(Protocol):
    """One transaction: committed when the with-block ends cleanly, rolled back if it raises."""

    @property
    def tasks(self) -> Repository[Task]: ...
    @property
    def sessions(self) -> Repository[Session]: ...
    @property
    def messages(self) -> Repository[SessionMessage]: ...
    @property
    def runs(self) -> Repository[Run]: ...
    @property
    def attempts(self) -> Repository[Attempt]: ...
    @property
    def steps(self) -> Repository[Step]: ...
    @property
    def tool_calls(self) -> Repository[ToolCall]: ...
    @property
    def artifacts(self) -> Repository[Artifact]: ...
    @property
    def patches(self) -> Repository[Patch]: ...
    @property
    def verifications(self) -> Repository[VerificationReport]: ...
    @property
    def judgements(self) -> Repository[JudgeReport]: ...
    @property
    def verdicts(self) -> Repository[Verdict]: ...
    @property
    def approvals(self) -> Repository[Approval]: ...
    @property
    def pull_requests(self) -> Repository[PullRequest]: ...
    @property
    def events(self) -> Events: ...

    def __enter__(self) -> Self: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def write_pending(self, pending: Pending) -> None:
        """Insert what `pending` holds, its steps, then tool calls, then artifacts (as
        `add_many` would), and append its events (as `append_many`), in this transaction."""
        ...

    def fence(self, attempt_id: str, lease_id: str, now: datetime) -> None:
        """LeaseLost unless this attempt still holds that unexpired lease."""
        ...

    def extend_lease(self, attempt_id: str, lease_id: str, now: datetime,
                     until: datetime) -> bool: ...

    def next_queued_run(self, now: datetime) -> Run | None:
        """The oldest ready queued run no other transaction has claimed, claimed."""
        ...

    def expired_attempts(self, now: datetime, *, limit: int | None = None) -> list[Attempt]: ...
    def wake_workers(self) -> None: ...

    def record_directory(self, attempt_id: str, directory: str) -> None:
        """Whose directory this is: what the sweep of a dead attempt's leftovers goes by."""
        ...

    def directories(self, attempt_ids: list[str]) -> list[str]:
        """The recorded directories of these attempts."""
        ...

    def unfinished_runs(self, task_id: str, *, besides: str) -> int: ...
    def run_status(self, run_id: str) -> RunStatus: ...
    def task_status(self, task_id: str) -> TaskStatus: ...
    def set_run_status(self, run_id: str, *, expected: RunStatus, target: RunStatus) -> None: ...
    def next_run_number(self, task_id: str) -> int: ...


class StepRow(NamedTuple):
    """A step's stored columns, as `run show --tree` shows them: what `Reads.step_tree_rows`
    gives, so the port says its own return type (the store and the fake build it)."""

    step_id: str
    attempt_id: str
    sequence_number: int
    type: str
    status: str
    title: str
    started_at: str | None
    ended_at: str | None
    failure_code: str | None
    attributes: str  # JSON text


class CallRow(NamedTuple):
    """A tool call's stored columns, as `run show --tree` shows them."""

    step_id: str | None
    tool_call_id: str
    tool_name: str
    arguments_json: str
    decision: str
    matched_rule: str | None
    denial_reason: str | None
    result: str | None  # the ToolResult's JSON text
    approved_by: str | None
    requested_at: str | None
    completed_at: str | None
    spec_digest: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """Everything stored about one run, for tests and reports that compare stores."""

    run: Run
    attempts: tuple[Attempt, ...]
    steps: tuple[Step, ...]
    tool_calls: tuple[ToolCall, ...]
    artifacts: tuple[Artifact, ...]
    verdict: Verdict | None
    patches: tuple[Patch, ...]
    verifications: tuple[VerificationReport, ...]
    judgements: tuple[JudgeReport, ...]
    events: tuple[Event, ...]


class Reads(Protocol):
    """Reads outside any write transaction (a snapshot each), as a context manager."""

    def __enter__(self) -> Self: ...
    def __exit__(self, *_: object) -> None: ...
    def task(self, text: str) -> Task: ...
    def run(self, text: str | None) -> Run: ...
    def cancel_request(self, run_id: str) -> tuple[str, str] | None: ...
    def waiting(self) -> bool: ...
    def record(self, run_id: str) -> RunRecord: ...
    def pull_requests(self, run_id: str) -> list[PullRequest]:
        """The run's pull requests, the first opened first."""
        ...

    def approvals(self, run_id: str) -> list[Approval]:
        """The run's approvals, the first given first."""
        ...

    # a run's records of one kind, in the order `record` gives them
    def attempts(self, run_id: str) -> list[Attempt]: ...
    def steps(self, run_id: str) -> list[Step]: ...
    def tool_calls(self, run_id: str) -> list[ToolCall]: ...
    def artifacts(self, run_id: str) -> list[Artifact]: ...
    def verdict(self, run_id: str) -> Verdict | None: ...
    def patch(self, run_id: str) -> Patch | None:
        """The run's last recorded patch."""
        ...

    def verification(self, run_id: str) -> VerificationReport | None:
        """The run's last verification report."""
        ...

    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]:
        """Those of these artifacts that exist, by id."""
        ...

    def step_tree_rows(self, run_id: str) -> list[StepRow]:
        """The stored columns of the run's steps, in attempt and step order (`run show
        --tree` of a busy run reads tens of thousands: no records decoded)."""
        ...

    def call_tree_rows(self, run_id: str) -> list[CallRow]: ...

    def event_head(self) -> tuple[int, str] | None:
        """(seq, hash) of the newest event; None for an empty log."""
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """Every read inside sees the store as of one moment."""
        ...

    def lease_due(self, now: datetime) -> bool:
        """Whether a live attempt's lease ran out by `now`: one cheap read, polled by commands
        that show runs before they reclaim anything."""
        ...

    def ended_attempt_directories(self, directories: Sequence[str]) -> list[str]:
        """Which of these directories were recorded by attempts that are no longer live."""
        ...


class Storage(Protocol):
    """A store: units of work, reads, the blob store and id prefixes."""

    @property
    def blobs(self) -> Blobs: ...
    def unit_of_work(self) -> UnitOfWork: ...
    def pending(self) -> Pending:
        """An empty holder of inserts that a later unit of work writes (`write_pending`)."""
        ...

    def reads(self) -> Reads: ...
    def resolve(self, kind: IdKind, text: str) -> str:
        """The full id for a unique prefix (NotFound, AmbiguousId)."""
        ...

    @property
    def state_root(self) -> Path:
        """The folder this store keeps its own files in: a home's default signing key lives
        there."""
        ...

    def audit(self) -> AuditReport:
        """The store's own integrity check (`audit verify`): the event chain, the signed
        checkpoint, every record against the event that vouches for it. BadInput when there
        is no store at all to check."""
        ...

    def checkpoint(self) -> Checkpoint | None:
        """The signed checkpoint of the event log; None while the log is unsigned."""
        ...

    def outage_errors(self) -> tuple[type[BaseException], ...]:
        """What this store raises when it, not the request, fails (its database or disk is
        away): whoever must outlive an outage, a worker or a sweep, catches these."""
        ...

    def outage_text(self, error: BaseException) -> str:
        """One line naming what failed, in the driver's or the system's words."""
        ...
