"""Runs, the frozen ExecutionSpec they execute under, and the attempts (leases) that carry them out."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from agentctl.domain import ids
from agentctl.domain.enums import (
    AttemptStatus,
    EventType,
    PrEligibility,
    RunStatus,
    TaskStatus,
    VerdictStatus,
)
from agentctl.domain.errors import InvariantViolation, LeaseLost
from agentctl.domain.events import NewEvent
from agentctl.domain.spec import Budget, ExecutionSpec
from agentctl.domain.transitions import advance
from agentctl.domain.verdict import Verdict

# Ends a run reaches only with a verdict in hand (DESIGN.md §1: never terminal without one).
ENDED_BY_VERDICT = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED,
                              RunStatus.EXPIRED, RunStatus.NEEDS_APPROVAL})


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    run_id: str
    task_id: str
    number: int
    status: RunStatus
    execution_spec: ExecutionSpec
    spec_digest: str
    policy_decision: dict[str, object]
    base_commit: str
    budget: Budget
    created_at: datetime
    started_at: datetime | None = None
    completed_at: datetime | None = None
    failure_summary: str | None = None
    active_attempt_id: str | None = None
    not_before: datetime | None = None
    cancel_requested_by: str | None = None
    cancel_reason: str | None = None
    replay_of: str | None = None  # the run this one replays (`run replay`)

    def __post_init__(self) -> None:
        if not self.base_commit:
            raise InvariantViolation("a run must bind a base commit before it executes")
        if self.base_commit != self.execution_spec.base_commit:
            raise InvariantViolation("a run's base commit must be the one its spec is bound to")

    def advanced(self, target: RunStatus, at: datetime) -> Run:
        """The run moved along its working states; an end needs a verdict (`concluded`)."""
        if target in ENDED_BY_VERDICT:
            raise InvariantViolation(f"run {self.run_id} cannot end {target.value} without a "
                                     "verdict")
        advance(self.status, target, f"run {self.run_id}")
        return replace(self, status=target)

    def requeued(self, at: datetime, *, not_before: datetime, reason: str) -> Run:
        """Back to the queue for a fresh attempt, not before the backoff has passed."""
        return replace(self.advanced(RunStatus.QUEUED, at), active_attempt_id=None,
                       not_before=not_before, failure_summary=reason)

    def concluded(self, verdict: Verdict, at: datetime, *,
                  failure_summary: str | None = None) -> Run:
        """The run ends where its verdict says: COMPLETED, FAILED, CANCELLED, or NEEDS_APPROVAL."""
        if verdict.run_id != self.run_id:
            raise InvariantViolation(f"verdict {verdict.verdict_id} is not run {self.run_id}'s")
        target = run_status_for(verdict.status, verdict.pr_eligibility)
        advance(self.status, target, f"run {self.run_id}")
        summary = failure_summary or (verdict.reasons[0] if target is RunStatus.FAILED else None)
        return replace(self, status=target, active_attempt_id=None, failure_summary=summary,
                       completed_at=None if target is RunStatus.NEEDS_APPROVAL else at)

    def closed(self, verdict: Verdict, at: datetime, *, cancelled: bool = False) -> Run:
        """A run that waited for a human ends under the verdict it has: COMPLETED once someone
        decided, CANCELLED if it was cancelled instead."""
        if verdict.run_id != self.run_id:
            raise InvariantViolation(f"verdict {verdict.verdict_id} is not run {self.run_id}'s")
        target = RunStatus.CANCELLED if cancelled else RunStatus.COMPLETED
        if self.status is not RunStatus.NEEDS_APPROVAL:
            raise InvariantViolation(f"run {self.run_id} is {self.status.value}, not waiting for "
                                     "a human")
        advance(self.status, target, f"run {self.run_id}")
        return replace(self, status=target, completed_at=at)


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    attempt_id: str
    run_id: str
    attempt_number: int
    worker_id: str
    lease_id: str
    status: AttemptStatus
    started_at: datetime
    last_heartbeat_at: datetime
    lease_expires_at: datetime
    ended_at: datetime | None = None
    failure_code: str | None = None
    end_reason: str | None = None

    def with_status(
        self, target: AttemptStatus, at: datetime, *, failure_code: str | None = None,
        end_reason: str | None = None,
    ) -> Attempt:
        advance(self.status, target, f"attempt {self.attempt_id}")
        ended = target not in (AttemptStatus.STARTING, AttemptStatus.ACTIVE)
        return replace(
            self, status=target, ended_at=at if ended else None,
            failure_code=failure_code or self.failure_code, end_reason=end_reason or self.end_reason,
        )

    def holds_lease(self, lease_id: str, now: datetime) -> bool:
        return (
            self.lease_id == lease_id
            and self.status in (AttemptStatus.STARTING, AttemptStatus.ACTIVE)
            and self.lease_expires_at > now
        )

    def ensure_may_write(self, lease_id: str, now: datetime) -> None:
        """The fencing rule: only the run's current, unexpired lease may write."""
        if not self.holds_lease(lease_id, now):
            raise LeaseLost(
                f"attempt {self.attempt_id} no longer holds lease {lease_id} "
                f"(status {self.status.value}, expires {self.lease_expires_at.isoformat()})"
            )


def lease_attempt(run: Run, *, number: int, worker_id: str, ttl_seconds: float, now: datetime,
                  ) -> tuple[Run, Attempt]:
    """A queued run taken by a worker: the run LEASED to a new attempt `number`."""
    if run.not_before and run.not_before > now:
        raise InvariantViolation(f"run {run.run_id} waits out its backoff until "
                                 f"{run.not_before.isoformat()}")
    attempt = Attempt(
        attempt_id=ids.new_id("attempt"), run_id=run.run_id, attempt_number=number,
        worker_id=worker_id, lease_id=ids.new_id("lease"), status=AttemptStatus.STARTING,
        started_at=now, last_heartbeat_at=now,
        lease_expires_at=now + timedelta(seconds=ttl_seconds),
    )
    leased = replace(run.advanced(RunStatus.LEASED, now), active_attempt_id=attempt.attempt_id,
                     started_at=run.started_at or now)
    return leased, attempt


def lease_acquired(run: Run, attempt: Attempt) -> NewEvent:
    return NewEvent(type=EventType.LEASE_ACQUIRED, created_at=attempt.started_at,
                    task_id=run.task_id, run_id=run.run_id, attempt_id=attempt.attempt_id,
                    payload={"workerId": attempt.worker_id, "leaseId": attempt.lease_id,
                             "attemptNumber": attempt.attempt_number,
                             "leaseExpiresAt": attempt.lease_expires_at.isoformat()})


def run_status_for(verdict: VerdictStatus, eligibility: PrEligibility) -> RunStatus:
    """Where a run ends once its verdict is decided."""
    if verdict is VerdictStatus.CANCELLED:
        return RunStatus.CANCELLED
    if verdict not in (VerdictStatus.SUCCESS, VerdictStatus.SUCCESS_NEEDS_REVIEW):
        return RunStatus.FAILED
    if eligibility is PrEligibility.ELIGIBLE_AFTER_HUMAN_APPROVAL:
        return RunStatus.NEEDS_APPROVAL
    return RunStatus.COMPLETED


def task_status_after(verdict: VerdictStatus) -> TaskStatus:
    """The task's status when its last unfinished run ends with `verdict`."""
    if verdict in (VerdictStatus.SUCCESS, VerdictStatus.SUCCESS_NEEDS_REVIEW):
        return TaskStatus.COMPLETED
    if verdict is VerdictStatus.CANCELLED:
        return TaskStatus.READY_FOR_RUN
    return TaskStatus.FAILED


def cancelled_before_pr(status: str, verdict_status: str | None) -> bool:
    """A run cancelled while it awaited a human's approval: its verdict was decided and stands
    (the run is CANCELLED, the verdict is not), and no PR is opened for it, since an approval is
    refused once the run has ended. Statuses as text: what `run show`'s document holds."""
    return status == RunStatus.CANCELLED.value and verdict_status is not None \
        and verdict_status != VerdictStatus.CANCELLED.value


BEFORE_PR = "before its PR: the verdict stands, and no PR will be opened"


def may_retry(attempt_number: int, budget: Budget) -> bool:
    """Infrastructure failures earn a fresh attempt while the budget's attempts last."""
    return attempt_number < budget.max_attempts
