"""Steps (timed units of work inside an attempt) and the tool calls a TOOL_CALL step carries."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from agentctl._speedups.fast_init import fast_init
from agentctl.domain.enums import ChangeType, StepStatus, StepType, ToolDecision, ToolOutcome
from agentctl.domain.errors import InvariantViolation
from agentctl.domain.transitions import advance

# Attribute values longer than this belong in an artifact (seed: long output must be an artifact).
MAX_ATTRIBUTE_CHARS = 2_000
CHANGED_FILES = "changedFiles"  # the attribute a step's changed files are kept under


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """A file one step changed: "which step edited `pom.xml`" (DESIGN.md). Kept in the step's
    attributes under `changedFiles`, as `run show --json` shows them."""

    path: str
    change_type: ChangeType
    additions: int
    deletions: int
    old_path: str | None = None
    binary_size: int | None = None  # a binary file's bytes (after; before when deleted): no lines

    def to_json(self, clean: Callable[[str], str] = str) -> dict[str, object]:
        """As recorded on the step; `clean` redacts the paths (a secret used as a file name)."""
        document: dict[str, object] = {"path": clean(self.path),
                                       "changeType": self.change_type.value,
                                       "additions": self.additions, "deletions": self.deletions}
        if self.old_path:
            document["oldPath"] = clean(self.old_path)
        if self.binary_size is not None:
            document["binary"], document["sizeBytes"] = True, self.binary_size
        return document


def changed_files_attribute(changed: Sequence[ChangedFile],
                            clean: Callable[[str], str] = str) -> dict[str, object]:
    """The attributes a step records its changed files in (none when it changed none)."""
    return {CHANGED_FILES: [entry.to_json(clean) for entry in changed]} if changed else {}


def changed_files_of(attributes: Mapping[str, object]) -> tuple[ChangedFile, ...]:
    """The changed files recorded in a step's attributes; an entry that is not one (an edited
    row) is left out rather than failing a read."""
    entries = attributes.get(CHANGED_FILES)
    if not isinstance(entries, list):
        return ()
    found = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        path, kind, old = entry.get("path"), entry.get("changeType"), entry.get("oldPath")
        additions, deletions = entry.get("additions", 0), entry.get("deletions", 0)
        if isinstance(path, str) and kind in _CHANGE_TYPES and isinstance(additions, int) \
                and isinstance(deletions, int) and (old is None or isinstance(old, str)):
            size = entry.get("sizeBytes")
            found.append(ChangedFile(path, ChangeType(kind), additions, deletions, old,
                                     size if entry.get("binary") and isinstance(size, int)
                                     else None))
    return tuple(found)


_CHANGE_TYPES = frozenset(kind.value for kind in ChangeType)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    step_id: str
    run_id: str
    attempt_id: str
    sequence_number: int
    type: StepType
    status: StepStatus
    title: str
    started_at: datetime
    ended_at: datetime | None = None
    attributes: Mapping[str, object] = field(default_factory=dict)
    artifacts: tuple[str, ...] = ()
    failure_code: str | None = None
    tool_call_id: str | None = None

    def __post_init__(self) -> None:
        check_step(self)

    @property
    def changed_files(self) -> tuple[ChangedFile, ...]:
        """The files this step changed, typed. Kept in its attributes (`changedFiles`), not a
        field and column of their own: a step's stored columns are sealed into the event log,
        and every step recorded with changes holds them inside its `attributes` (as `run show
        --json` shows them, DESIGN §7); moving them would break those seals, and a new column
        beside them would leave reads knowing both places for good."""
        return changed_files_of(self.attributes)

    def finished(
        self, target: StepStatus, at: datetime, *, failure_code: str | None = None,
        attributes: Mapping[str, object] | None = None, artifacts: tuple[str, ...] = (),
    ) -> Step:
        advance(self.status, target, f"step {self.step_id}")
        return replace(
            self, status=target, ended_at=at, failure_code=failure_code or self.failure_code,
            attributes={**self.attributes, **(attributes or {})},
            artifacts=self.artifacts + artifacts,
        )


def check_step(step: Step) -> None:
    if step.sequence_number < 1:
        raise InvariantViolation("step sequence numbers start at 1")
    if step.type is StepType.TOOL_CALL and not step.tool_call_id:
        raise InvariantViolation(f"TOOL_CALL step {step.step_id} must reference its ToolCall")
    if step.status is StepStatus.FAILED and not (step.failure_code or step.artifacts):
        raise InvariantViolation(f"failed step {step.step_id} needs a failure code or an artifact")
    for key, value in step.attributes.items():
        if isinstance(value, str) and len(value) > MAX_ATTRIBUTE_CHARS:
            raise InvariantViolation(
                f"step attribute {key!r} is {len(value)} characters: long output is an artifact"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What the agent got back: bounded and redacted before it is stored or shown.

    `outcome` and `decision` are what callers branch on; `error` is text for people only.
    """

    outcome: ToolOutcome
    decision: ToolDecision = ToolDecision.ALLOWED
    output: str = ""
    exit_code: int | None = None
    truncated: bool = False
    output_bytes: int = 0
    duration_ms: int = 0
    error: str | None = None

    def __post_init__(self) -> None:
        denied = self.decision is not ToolDecision.ALLOWED
        if denied != (self.outcome is ToolOutcome.DENIED):
            raise InvariantViolation(
                f"a {self.outcome.value} tool result cannot carry the decision {self.decision.value}")

    @property
    def ok(self) -> bool:
        return self.outcome is ToolOutcome.OK

    @classmethod
    def denied(cls, decision: ToolDecision, reason: str) -> ToolResult:
        return cls(outcome=ToolOutcome.DENIED, decision=decision,
                   error=f"denied ({decision.value}): {reason}")


CANCELLED = ToolOutcome.CANCELLED.value
"""The failure of a step a person stopped (Ctrl-C, SIGTERM): its code and its whole text."""

_STEP_STATUS = {
    ToolOutcome.OK: StepStatus.SUCCEEDED,
    ToolOutcome.FAILED: StepStatus.FAILED,
    ToolOutcome.DENIED: StepStatus.DENIED,
    ToolOutcome.TIMED_OUT: StepStatus.TIMED_OUT,
    ToolOutcome.CANCELLED: StepStatus.FAILED,
}


def step_status_of(result: ToolResult) -> StepStatus:
    """The TOOL_CALL step's status for a call that ended with `result`."""
    return _STEP_STATUS[result.outcome]


def failure_code_of(result: ToolResult) -> str | None:
    """Why the step did not succeed, as a code: the denial, `timed_out`, `exit_N`..."""
    match result.outcome:
        case ToolOutcome.OK:
            return None
        case ToolOutcome.DENIED:
            return result.decision.value
        case ToolOutcome.TIMED_OUT | ToolOutcome.CANCELLED:
            return result.outcome.value
        case _:
            return f"exit_{result.exit_code}" if result.exit_code is not None else "tool_error"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    tool_call_id: str
    step_id: str
    run_id: str
    attempt_id: str
    tool_name: str
    arguments_json: str
    decision: ToolDecision
    matched_rule: str | None
    denial_reason: str | None
    requested_at: datetime
    spec_digest: str
    result: ToolResult | None = None
    completed_at: datetime | None = None
    approved_by: str | None = None

    def __post_init__(self) -> None:
        denied = self.decision is not ToolDecision.ALLOWED
        if denied and not self.denial_reason:
            raise InvariantViolation(f"denied tool call {self.tool_call_id} must say why")
        if denied and self.result is not None and self.result.ok:
            raise InvariantViolation(f"denied tool call {self.tool_call_id} cannot have run")
