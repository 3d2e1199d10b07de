"""The one transition table per status enum; every status change goes through `advance`."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeVar

from agentctl.domain.enums import AttemptStatus, RunStatus, StepStatus, TaskStatus
from agentctl.domain.errors import IllegalTransition

S = TypeVar("S", bound=StrEnum)

T = TaskStatus
TASK: Mapping[TaskStatus, frozenset[TaskStatus]] = {
    T.DRAFT: frozenset({T.ACCEPTED, T.POLICY_DENIED, T.CANCELLED}),
    T.ACCEPTED: frozenset({T.READY_FOR_RUN, T.POLICY_DENIED, T.CANCELLED}),
    T.READY_FOR_RUN: frozenset({T.RUNNING, T.CANCELLED, T.ARCHIVED}),
    # A run that ends without another one active hands the task back: finished, failed, or
    # (run cancelled) ready again.
    T.RUNNING: frozenset({T.COMPLETED, T.FAILED, T.READY_FOR_RUN, T.CANCELLED}),
    # Finished tasks accept a rerun, e.g. after the base branch moved.
    T.COMPLETED: frozenset({T.RUNNING, T.CANCELLED, T.ARCHIVED}),
    T.FAILED: frozenset({T.RUNNING, T.CANCELLED, T.ARCHIVED}),
    T.POLICY_DENIED: frozenset({T.ARCHIVED}),
    T.CANCELLED: frozenset({T.ARCHIVED}),
    T.ARCHIVED: frozenset(),
}

R = RunStatus
_RUN_ACTIVE = (R.PREPARING_WORKSPACE, R.RUNNING_AGENT, R.VERIFYING, R.JUDGING)
RUN: Mapping[RunStatus, frozenset[RunStatus]] = {
    R.CREATED: frozenset({R.QUEUED, R.CANCELLED}),
    R.QUEUED: frozenset({R.LEASED, R.CANCELLED, R.EXPIRED}),
    # Leased or working: forward, back to the queue (infrastructure failure or lost lease with
    # attempts left), FAILED (verdict decided early or attempts exhausted), or CANCELLED.
    R.LEASED: frozenset({R.PREPARING_WORKSPACE, R.QUEUED, R.FAILED, R.CANCELLED}),
    R.PREPARING_WORKSPACE: frozenset({R.RUNNING_AGENT, R.QUEUED, R.FAILED, R.CANCELLED}),
    R.RUNNING_AGENT: frozenset({R.VERIFYING, R.JUDGING, R.QUEUED, R.FAILED, R.CANCELLED}),
    R.VERIFYING: frozenset({R.JUDGING, R.QUEUED, R.FAILED, R.CANCELLED}),
    R.JUDGING: frozenset({R.COMPLETED, R.NEEDS_APPROVAL, R.QUEUED, R.FAILED, R.CANCELLED}),
    R.NEEDS_APPROVAL: frozenset({R.COMPLETED, R.CANCELLED}),
    R.COMPLETED: frozenset(),
    R.FAILED: frozenset(),
    R.CANCELLED: frozenset(),
    R.EXPIRED: frozenset(),
}

A = AttemptStatus
ATTEMPT: Mapping[AttemptStatus, frozenset[AttemptStatus]] = {
    A.STARTING: frozenset({A.ACTIVE, A.FAILED, A.LEASE_EXPIRED, A.CANCELLED}),
    A.ACTIVE: frozenset({A.COMPLETED, A.FAILED, A.LEASE_EXPIRED, A.CANCELLED}),
    A.COMPLETED: frozenset(),
    A.FAILED: frozenset(),
    A.LEASE_EXPIRED: frozenset(),
    A.CANCELLED: frozenset(),
}

St = StepStatus
STEP: Mapping[StepStatus, frozenset[StepStatus]] = {
    St.STARTED: frozenset({St.SUCCEEDED, St.FAILED, St.SKIPPED, St.DENIED, St.TIMED_OUT}),
    St.SUCCEEDED: frozenset(),
    St.FAILED: frozenset(),
    St.SKIPPED: frozenset(),
    St.DENIED: frozenset(),
    St.TIMED_OUT: frozenset(),
}

_TABLES: Mapping[type[StrEnum], tuple[str, Mapping[Any, frozenset[Any]]]] = {
    TaskStatus: ("task", TASK),
    RunStatus: ("run", RUN),
    AttemptStatus: ("attempt", ATTEMPT),
    StepStatus: ("step", STEP),
}

TERMINAL_RUN = frozenset(status for status, targets in RUN.items() if not targets)
ACTIVE_RUN = frozenset({R.LEASED, *_RUN_ACTIVE})
UNFINISHED_RUN = frozenset({R.CREATED, R.QUEUED, *ACTIVE_RUN})
RUNNABLE_TASK = frozenset({T.READY_FOR_RUN, T.RUNNING, T.COMPLETED, T.FAILED})


def can_advance(current: S, target: S) -> bool:
    _, table = _TABLES[type(current)]
    return target in table[current]


def advance(current: S, target: S, detail: str = "") -> S:
    """Return `target` if the table allows `current -> target`, else raise IllegalTransition."""
    entity, table = _TABLES[type(current)]
    if target not in table[current]:
        raise IllegalTransition(entity, current.value, target.value, detail)
    return target


def is_terminal(status: StrEnum) -> bool:
    _, table = _TABLES[type(status)]
    return not table[status]
