"""Tasks (structured, executable intent) and sessions (the messy conversation that leads to them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from fnmatch import fnmatchcase

from agentctl.domain import globs
from agentctl.domain.enums import (
    AutonomyLevel,
    MessageRole,
    SessionStatus,
    TaskSource,
    TaskStatus,
    TaskType,
    autonomy_rank,
)
from agentctl.domain.errors import InvariantViolation, PolicyDenied
from agentctl.domain.transitions import RUNNABLE_TASK, advance

# A task holds intent, not evidence: logs belong in artifacts. These bounds keep it that way.
MAX_INSTRUCTION_CHARS = 8_000
MAX_TITLE_CHARS = 200
MAX_LABEL_CHARS = 200


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    task_id: str
    source: TaskSource
    created_by: str
    task_type: TaskType
    title: str
    instruction: str
    repository: str | None
    base_ref: str
    autonomy_level: AutonomyLevel
    status: TaskStatus
    created_at: datetime
    updated_at: datetime
    labels: Mapping[str, str] = field(default_factory=dict)
    allowed_paths: tuple[str, ...] = ()
    forbidden_paths: tuple[str, ...] = ()
    verification_commands: tuple[str, ...] = ()
    session_id: str | None = None
    status_reason: str | None = None
    # The intent the checks must show beyond passing: tests that must pass (by runner id), and
    # whether tests may vanish (a task whose point is removing them).
    must_pass: tuple[str, ...] = ()
    allow_removed_tests: bool = False
    # SWE-bench's test_patch: a diff of tests the task supplies, applied over the base's code
    # and over the patch's code to judge it, so the agent's edits to those tests do not count
    test_patch: str | None = None

    def __post_init__(self) -> None:
        check_task_fields(
            instruction=self.instruction, title=self.title, labels=self.labels,
        )

    def with_status(self, target: TaskStatus, at: datetime, reason: str | None = None) -> Task:
        """The task in `target`, validated by the transition table and the task's rules."""
        advance(self.status, target, f"task {self.task_id}")
        if target is TaskStatus.READY_FOR_RUN and not self.repository:
            raise InvariantViolation(
                f"task {self.task_id} has no resolved repository; it cannot become READY_FOR_RUN"
            )
        if target is TaskStatus.POLICY_DENIED and not (reason and reason.strip()):
            raise InvariantViolation("a policy denial must carry a reason")
        return replace(self, status=target, updated_at=at, status_reason=reason)

    def ensure_runnable(self) -> None:
        """Refuse a new run for a task that policy denied, that was cancelled or archived."""
        if self.status not in RUNNABLE_TASK:
            why = f": {self.status_reason}" if self.status_reason else ""
            raise PolicyDenied(f"task {self.task_id} is {self.status.value}{why}; it cannot run")


def check_task_fields(*, instruction: str, title: str, labels: Mapping[str, str]) -> None:
    if not instruction or not instruction.strip():
        raise InvariantViolation("task instruction cannot be empty")
    if len(instruction) > MAX_INSTRUCTION_CHARS:
        raise InvariantViolation(
            f"task instruction is {len(instruction)} characters, more than {MAX_INSTRUCTION_CHARS}:"
            " a task holds intent, not logs"
        )
    if len(title) > MAX_TITLE_CHARS:
        raise InvariantViolation(f"task title is longer than {MAX_TITLE_CHARS} characters")
    for key, value in labels.items():
        if not key.strip():
            raise InvariantViolation("label keys cannot be empty")
        if len(value) > MAX_LABEL_CHARS:
            raise InvariantViolation(f"label {key!r} is longer than {MAX_LABEL_CHARS} characters")


def default_title(instruction: str) -> str:
    first_line = instruction.strip().splitlines()[0]
    return first_line if len(first_line) <= 80 else first_line[:77] + "..."


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskPolicy:
    """What project config lets a task ask for; a task's scope can only narrow it."""

    max_autonomy: AutonomyLevel
    forbidden_paths: tuple[str, ...]
    repository_allowlist: tuple[str, ...]
    allowed_paths: tuple[str, ...] = ()


def policy_denial_reasons(
    *,
    autonomy: AutonomyLevel,
    allowed_paths: Sequence[str],
    repository: str,
    policy: TaskPolicy,
) -> list[str]:
    """Why policy refuses the task; an empty list means it may run."""
    reasons: list[str] = []
    if autonomy_rank(autonomy) > autonomy_rank(policy.max_autonomy):
        reasons.append(
            f"autonomy {autonomy.value} exceeds max_autonomy {policy.max_autonomy.value}"
        )
    for allowed in allowed_paths:
        sample = globs.representative_path(allowed)
        # A glob naming a folder covers what lies below it, so try a path inside it too.
        rule = globs.first_match(policy.forbidden_paths, sample) or globs.first_match(
            policy.forbidden_paths, f"{sample}/x")
        if rule is not None:
            reasons.append(f"requested allowed path {allowed!r} is forbidden by config ({rule})")
        elif policy.allowed_paths and globs.first_match(policy.allowed_paths, sample) is None:
            reasons.append(f"requested allowed path {allowed!r} is outside config's allowed paths")
    if policy.repository_allowlist and not any(
        _repository_matches(entry, repository) for entry in policy.repository_allowlist
    ):
        reasons.append(f"repository {repository} is not in the repository allowlist")
    return reasons


def _repository_matches(entry: str, repository: str) -> bool:
    entry = entry.rstrip("/")
    return repository == entry or repository.startswith(entry + "/") or fnmatchcase(repository, entry)


@dataclass(frozen=True, slots=True, kw_only=True)
class Session:
    session_id: str
    owner: str
    source: TaskSource
    title: str
    status: SessionStatus
    created_at: datetime
    last_activity_at: datetime
    related_tasks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionMessage:
    message_id: str
    session_id: str
    role: MessageRole
    content: str
    created_at: datetime
    metadata: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.content.strip():
            raise InvariantViolation("a session message cannot be empty")


def shown_status(status: TaskStatus, *, awaiting_approval: bool) -> str:
    """The task's status as a person reads it: its stored COMPLETED or FAILED only says that no
    run is still working, so while one of its runs waits for a person's approval the task
    reads as that run does (NEEDS_APPROVAL, the run's word: the vocabulary has no other)."""
    if awaiting_approval and status in (TaskStatus.COMPLETED, TaskStatus.FAILED):
        return "NEEDS_APPROVAL"
    return status.value
