"""The life of a run around its execution: create, lease, heartbeat, cancel, reap, conclude.

Every end of an attempt or a run, wherever it is noticed, is an `AttemptEnd` that
`conclude_attempt` hands to the one domain rule (`domain.ending.conclude`) and stores.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from agentctl.config import Config
from agentctl.domain import ids
from agentctl.domain.agent import AgentSpec
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.ending import (
    Cancelled,
    Completed,
    InfraFailed,
    Situation,
    conclude,
    lease_expired,
    on_cancel_request,
)
from agentctl.domain.enums import EventType, RunStatus, StepStatus, TaskStatus
from agentctl.domain.errors import BadInput, LeaseLost
from agentctl.domain.events import NewEvent
from agentctl.domain.run import Attempt, Run, lease_acquired, lease_attempt
from agentctl.domain.spec import ExecutionSpec
from agentctl.domain.step import Step
from agentctl.domain.task import Task
from agentctl.domain.transitions import TERMINAL_RUN
from agentctl.domain.verdict import Verdict
from agentctl.execution import task_repository as repos
from agentctl.execution.work_tree import is_url
from agentctl.execution.workspaces.discard import remove_leftovers
from agentctl.services.attempts.spec import build_spec
from agentctl.services.ports import Heartbeat, Lease
from agentctl.services.unit_of_work import Events, IdKind, Repository


class NewRunWork(Protocol):
    """What queueing a run reads and writes in its transaction: the task's status and the
    run's number, the run, the task's move to RUNNING, the events, and a wake-up."""

    @property
    def tasks(self) -> Repository[Task]: ...
    @property
    def runs(self) -> Repository[Run]: ...
    @property
    def events(self) -> Events: ...
    def task_status(self, task_id: str) -> TaskStatus: ...
    def next_run_number(self, task_id: str) -> int: ...
    def wake_workers(self) -> None: ...


class NewRunStore(Protocol):
    """The part of the storage port queueing a run uses (any `Storage` is one)."""

    def unit_of_work(self) -> AbstractContextManager[NewRunWork]: ...


class TaskReads(Protocol):
    def task(self, text: str) -> Task: ...


class CreateStore(NewRunStore, Protocol):
    """The part of the storage port creating a run uses: queueing it, after the task is
    found by its id or prefix and read."""

    def reads(self) -> AbstractContextManager[TaskReads]: ...
    def resolve(self, kind: IdKind, text: str) -> str: ...


def create_run(storage: CreateStore, config: Config, task_text: str, *, agent: AgentSpec,
               base_commit: str | None = None, clock: Clock = utcnow) -> Run:
    """A QUEUED run bound to the base ref's current commit under a frozen ExecutionSpec;
    `base_commit`: the commit the ref was just resolved to (by the task's submit, in the same
    command), so git is not asked twice."""
    task_id = storage.resolve("task", task_text)  # a write's first step (brings the schema up)
    with storage.reads() as reads:
        task = reads.task(task_id)
    task.ensure_runnable()
    base_commit = base_commit or _resolve_base_commit(task)
    spec = build_spec(task, config, base_commit=base_commit, agent=agent.describe(),
                      agent_digest=agent.digest)
    return queue_run(storage, task, spec, {"allowed": True,
                                           "config": str(config.source or "defaults")},
                     clock=clock)


def queue_run(storage: NewRunStore, task: Task, spec: ExecutionSpec,
              policy_decision: dict[str, object], *, replay_of: str | None = None,
              clock: Clock = utcnow) -> Run:
    """A QUEUED run of `task` under `spec` (its base commit already bound); a replay names
    the run it replays (`replay_of`), as its RunCreated event does."""
    now = clock()
    agent = spec.agent_spec
    with storage.unit_of_work() as uow:
        # Read once, by the caller, so that git runs outside the write lock; here only its
        # status is checked again, in case the task was cancelled meanwhile.
        task = replace(task, status=uow.task_status(task.task_id))
        task.ensure_runnable()
        run = Run(
            run_id=ids.new_id("run"), task_id=task.task_id,
            number=uow.next_run_number(task.task_id), status=RunStatus.CREATED,
            execution_spec=spec, spec_digest=spec.digest(), policy_decision=policy_decision,
            base_commit=spec.base_commit, budget=spec.budget, created_at=now,
            replay_of=replay_of,
        )
        queued = run.advanced(RunStatus.QUEUED, now)
        uow.runs.add(queued)
        if task.status is not TaskStatus.RUNNING:
            uow.tasks.save(task.with_status(TaskStatus.RUNNING, now),
                           expected_status=task.status)
        uow.events.append(
            NewEvent(type=EventType.RUN_CREATED, created_at=now, task_id=task.task_id,
                     run_id=run.run_id, payload={
                         "number": run.number, "baseRef": task.base_ref,
                         "baseCommit": spec.base_commit, "specDigest": run.spec_digest,
                         "agent": agent.describe(), "agentDigest": agent.digest,
                         **({"replayOf": replay_of} if replay_of else {})}),
            NewEvent(type=EventType.RUN_QUEUED, created_at=now, task_id=task.task_id,
                     run_id=run.run_id, payload={"reason": "created"}),
        )
        uow.wake_workers()
    return queued


def _resolve_base_commit(task: Task) -> str:
    """Every run resolves the base ref again: a rerun after the branch moved binds the new commit."""
    location = task.repository or ""
    if is_url(location) and not location.startswith("file://"):
        return repos.remote_commit_of(location, task.base_ref)
    if not Path(location).exists():
        raise BadInput(f"task repository {location} no longer exists")
    return repos.commit_of(location, task.base_ref)


RECLAIM_PER_CLAIM = 4  # expired leases a claim takes back before it looks for work


def lease_run(storage: ClaimStore, *, worker_id: str, ttl_seconds: float, run_id: str | None = None,
              clock: Clock = utcnow) -> Lease | None:
    """Take one queued run (that one, or the oldest ready) for this worker, in one short
    transaction that first reclaims expired leases (their runs go back to the queue or end).

    The run is locked as it is picked (SKIP LOCKED on PostgreSQL: concurrent workers pick
    different runs instead of queueing behind one another); the domain leases it, and the write
    is a compare-and-set on QUEUED.
    """
    now = clock()
    with storage.unit_of_work() as uow:
        leftovers = _reclaim_expired(uow, now, limit=RECLAIM_PER_CLAIM)[1]
        lease = _claim(uow, run_id, worker_id=worker_id, ttl_seconds=ttl_seconds, now=now)
    remove_leftovers(leftovers)  # once the reclaim is on record
    return lease


def _claim(uow: ClaimWork, run_id: str | None, *, worker_id: str, ttl_seconds: float,
           now: datetime) -> Lease | None:
    run = uow.runs.get(run_id) if run_id else uow.next_queued_run(now)
    if run is None or run.status is not RunStatus.QUEUED or (
            run.not_before and run.not_before > now):
        return None
    leased, attempt = lease_attempt(
        run, number=len(uow.attempts.find(run_id=run.run_id)) + 1, worker_id=worker_id,
        ttl_seconds=ttl_seconds, now=now)
    uow.runs.save(leased, expected_status=RunStatus.QUEUED)
    uow.attempts.add(attempt)
    uow.events.append(lease_acquired(leased, attempt))
    return Lease(run.run_id, run.task_id, attempt.attempt_id, attempt.attempt_number,
                 attempt.lease_id, worker_id, ttl_seconds)


class LeaseWork(Protocol):
    """What a heartbeat does in its transaction: extend the lease, read the run's flags."""

    @property
    def runs(self) -> Repository[Run]: ...
    def extend_lease(self, attempt_id: str, lease_id: str, now: datetime,
                     until: datetime) -> bool: ...


class LeaseStore(Protocol):
    """The part of the storage port a heartbeat uses (any `Storage` is one)."""

    def unit_of_work(self) -> AbstractContextManager[LeaseWork]: ...


def heartbeat(storage: LeaseStore, lease: Lease, *, clock: Clock = utcnow) -> Heartbeat:
    """Extend the lease; raise LeaseLost if it is gone; report a requested cancellation."""
    now = clock()
    with storage.unit_of_work() as uow:
        if not uow.extend_lease(lease.attempt_id, lease.lease_id, now,
                                now + timedelta(seconds=lease.ttl_seconds)):
            raise LeaseLost(f"attempt {lease.attempt_id} lost its lease")
        run = uow.runs.get(lease.run_id)
    if run.cancel_requested_by:
        return Heartbeat((run.cancel_requested_by, run.cancel_reason or ""))
    return Heartbeat(None)


class EndingWork(Protocol):
    """What ending or cancelling a run reads and writes in its transaction: the run, its task,
    its attempt and open steps, a verdict awaiting approval, the events, and whether the task
    has other runs still going (`conclude_attempt`, `request_cancellation`)."""

    @property
    def tasks(self) -> Repository[Task]: ...
    @property
    def runs(self) -> Repository[Run]: ...
    @property
    def attempts(self) -> Repository[Attempt]: ...
    @property
    def steps(self) -> Repository[Step]: ...
    @property
    def verdicts(self) -> Repository[Verdict]: ...
    @property
    def events(self) -> Events: ...
    def unfinished_runs(self, task_id: str, *, besides: str) -> int: ...


class CancelStore(Protocol):
    """The part of the storage port a cancellation uses (any `Storage` is one)."""

    def unit_of_work(self) -> AbstractContextManager[EndingWork]: ...
    def resolve(self, kind: IdKind, text: str) -> str: ...


def cancel_run(storage: CancelStore, run_text: str, *, by: str, reason: str,
               clock: Clock = utcnow) -> Run:
    run_id = storage.resolve("run", run_text)
    now = clock()
    with storage.unit_of_work() as uow:
        run = uow.runs.get(run_id)
        if run.status in TERMINAL_RUN:
            raise BadInput(f"run {run.run_id} already ended {run.status.value}")
        return request_cancellation(uow, run, by=by, reason=reason, now=now)


def request_cancellation(uow: EndingWork, run: Run, *, by: str, reason: str,
                         now: datetime) -> Run:
    """A run that no worker holds is cancelled at once; a running one is flagged for its worker."""
    if run.status in TERMINAL_RUN:
        return run
    uow.events.append(NewEvent(
        type=EventType.RUN_CANCELLED, created_at=now, task_id=run.task_id, run_id=run.run_id,
        payload={"by": by, "reason": reason, "phase": "requested", "status": run.status.value},
    ))
    uow.runs.save(replace(run, cancel_requested_by=by, cancel_reason=reason),
                  expected_status=run.status)
    attempt = uow.attempts.get(run.active_attempt_id) if run.active_attempt_id else None
    end = on_cancel_request(run, attempt, by=by, reason=reason, now=now)
    if end is None:
        return uow.runs.get(run.run_id)  # its worker sees the flag at its next heartbeat
    return conclude_attempt(uow, run.run_id, end, now,
                            attempt_id=attempt.attempt_id if attempt else None)


def conclude_attempt(uow: EndingWork, run_id: str, end: Completed | Cancelled | InfraFailed,
                     now: datetime, *, attempt_id: str | None = None) -> Run:
    """Decide what `end` does to the run (domain.ending.conclude) and store it, each record a
    compare-and-set on the status it was read with. The run as it stands afterwards."""
    situation = _situation(uow, run_id, attempt_id)
    done = conclude(end, now, situation)
    if done.attempt is not None and situation.attempt is not None:
        uow.attempts.save(done.attempt, expected_status=situation.attempt.status)
    for step in done.closed_steps:
        uow.steps.save(step, expected_status=StepStatus.STARTED)
    if done.verdict is not None:
        uow.verdicts.add(done.verdict)
    if done.run is not None:
        uow.runs.save(done.run, expected_status=situation.run.status)
    if done.task is not None:
        uow.tasks.save(done.task, expected_status=situation.task.status)
    uow.events.append_many(done.events)
    return done.run or situation.run


def _situation(uow: EndingWork, run_id: str, attempt_id: str | None) -> Situation:
    run = uow.runs.get(run_id)
    attempt = uow.attempts.get(attempt_id) if attempt_id else None
    verdicts = uow.verdicts.find(run_id=run_id) if run.status is RunStatus.NEEDS_APPROVAL else []
    open_steps = uow.steps.find(attempt_id=attempt_id, status=StepStatus.STARTED,
                                order_by="sequence_number") if attempt_id else []
    return Situation(
        run=run, task=uow.tasks.get(run.task_id), attempt=attempt,
        verdict=verdicts[0] if verdicts else None, open_steps=tuple(open_steps),
        other_unfinished_runs=uow.unfinished_runs(run.task_id, besides=run.run_id),
    )


class ReclaimWork(EndingWork, Protocol):
    """What taking back expired leases does in its transaction: ending each attempt (or sending
    its run back to the queue), waking the workers, reading the attempts' directories."""

    def expired_attempts(self, now: datetime, *, limit: int | None = None) -> list[Attempt]: ...
    def wake_workers(self) -> None: ...
    def directories(self, attempt_ids: list[str]) -> list[str]: ...


class ReclaimStore(Protocol):
    """The part of the storage port reaping expired leases uses (any `Storage` is one)."""

    def unit_of_work(self) -> AbstractContextManager[ReclaimWork]: ...


class ClaimWork(ReclaimWork, Protocol):
    """What a claim does in its transaction: reclaim expired leases, then lease a queued run."""

    def next_queued_run(self, now: datetime) -> Run | None: ...


class ClaimStore(Protocol):
    """The part of the storage port leasing a run uses (any `Storage` is one)."""

    def unit_of_work(self) -> AbstractContextManager[ClaimWork]: ...


def reap_expired(storage: ReclaimStore, *, clock: Clock = utcnow) -> list[Run]:
    """Attempts whose lease ran out (their worker died or hangs) become LEASE_EXPIRED; their runs
    get a fresh attempt while the budget allows, else end FAILED_INFRASTRUCTURE."""
    now = clock()
    with storage.unit_of_work() as uow:
        reaped, leftovers = _reclaim_expired(uow, now)
    remove_leftovers(leftovers)  # once the reclaim is on record
    return reaped


def _reclaim_expired(uow: ReclaimWork, now: datetime, *,
                     limit: int | None = None) -> tuple[list[Run], list[str]]:
    """The runs of the attempts reclaimed, and those attempts' recorded directories."""
    reaped = []
    expired = uow.expired_attempts(now, limit=limit)
    for attempt in expired:
        run = conclude_attempt(uow, attempt.run_id, lease_expired(attempt), now,
                               attempt_id=attempt.attempt_id)
        if run.status is RunStatus.QUEUED:
            uow.wake_workers()
        reaped.append(run)
    return reaped, uow.directories([attempt.attempt_id for attempt in expired])
