"""The life of a run around its execution: create, lease, heartbeat, cancel, finish, retry."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from agentctl.config import Config
from agentctl.domain import ids
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import (
    AttemptStatus,
    EventType,
    RunStatus,
    StepStatus,
    TaskStatus,
    VerdictStatus,
)
from agentctl.domain.errors import BadInput, LeaseLost
from agentctl.domain.events import NewEvent
from agentctl.domain.run import (
    Attempt,
    Run,
    may_retry,
    run_status_for,
    task_status_after,
)
from agentctl.domain.task import Task
from agentctl.domain.transitions import TERMINAL_RUN, UNFINISHED_RUN
from agentctl.domain.verdict import (
    Decision,
    Evidence,
    Verdict,
    VerdictInputs,
    decide_verdict,
)
from agentctl.execution import repository as repos
from agentctl.execution.agents.spec import AgentSpec
from agentctl.services.spec import build_spec
from agentctl.store import Store
from agentctl.store.uow import UnitOfWork
from agentctl.store.views import Views

RULES = "agentctl rules"


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


def create_run(store: Store, config: Config, task_text: str, *, agent: AgentSpec,
               clock: Clock = utcnow) -> Run:
    """A QUEUED run bound to the base ref's current commit under a frozen ExecutionSpec."""
    with Views(store.home) as views:
        task = views.task(task_text)
    task.ensure_runnable()
    base_commit = _resolve_base_commit(task)
    spec = build_spec(task, config, base_commit=base_commit, agent=agent.describe(),
                      agent_digest=agent.digest)
    now = clock()
    with store.unit_of_work() as uow:
        task = uow.tasks.get(task.task_id)  # again, under the write lock
        task.ensure_runnable()
        run = Run(
            run_id=ids.new_id("run"), task_id=task.task_id,
            number=uow.next_run_number(task.task_id), status=RunStatus.CREATED,
            execution_spec=spec, spec_digest=spec.digest(),
            policy_decision={"allowed": True, "config": str(config.source or "defaults")},
            base_commit=base_commit, budget=spec.budget, created_at=now,
        )
        queued = run.with_status(RunStatus.QUEUED, now)
        uow.runs.add(queued)
        if task.status is not TaskStatus.RUNNING:
            uow.tasks.save(task.with_status(TaskStatus.RUNNING, now),
                           expected_status=task.status.value)
        uow.events.append(
            NewEvent(type=EventType.RUN_CREATED, created_at=now, task_id=task.task_id,
                     run_id=run.run_id, payload={
                         "number": run.number, "baseRef": task.base_ref,
                         "baseCommit": base_commit, "specDigest": run.spec_digest,
                         "agent": agent.describe(), "agentDigest": agent.digest}),
            NewEvent(type=EventType.RUN_QUEUED, created_at=now, task_id=task.task_id,
                     run_id=run.run_id, payload={"reason": "created"}),
        )
    return queued


def _resolve_base_commit(task: Task) -> str:
    """Every run resolves the base ref again: a rerun after the branch moved binds the new commit."""
    location = task.repository or ""
    if repos.is_url(location) and not location.startswith("file://"):
        return repos.remote_commit_of(location, task.base_ref)
    if not Path(location).exists():
        raise BadInput(f"task repository {location} no longer exists")
    return repos.commit_of(location, task.base_ref)


def lease_run(store: Store, *, worker_id: str, ttl_seconds: float, run_id: str | None = None,
              clock: Clock = utcnow) -> Lease | None:
    """Take one queued run (that one, or the oldest ready) for this worker: compare-and-set."""
    now = clock()
    with store.unit_of_work() as uow:
        candidates = [run_id] if run_id else uow.queued_run_ids(now, limit=16)
        for candidate in candidates:
            run = uow.runs.get(candidate)
            if run.status is not RunStatus.QUEUED or (run.not_before and run.not_before > now):
                continue
            attempt = Attempt(
                attempt_id=ids.new_id("attempt"), run_id=run.run_id,
                attempt_number=len(uow.attempts.find(run_id=run.run_id)) + 1,
                worker_id=worker_id, lease_id=ids.new_id("lease"), status=AttemptStatus.STARTING,
                started_at=now, last_heartbeat_at=now,
                lease_expires_at=now + timedelta(seconds=ttl_seconds),
            )
            leased = replace(run.with_status(RunStatus.LEASED, now),
                             active_attempt_id=attempt.attempt_id,
                             started_at=run.started_at or now)
            uow.runs.save(leased, expected_status=RunStatus.QUEUED.value)
            uow.attempts.add(attempt)
            uow.events.append(NewEvent(
                type=EventType.LEASE_ACQUIRED, created_at=now, task_id=run.task_id,
                run_id=run.run_id, attempt_id=attempt.attempt_id,
                payload={"workerId": worker_id, "leaseId": attempt.lease_id,
                         "attemptNumber": attempt.attempt_number,
                         "leaseExpiresAt": attempt.lease_expires_at.isoformat()},
            ))
            return Lease(run.run_id, run.task_id, attempt.attempt_id, attempt.attempt_number,
                         attempt.lease_id, worker_id, ttl_seconds)
    return None


@dataclass(frozen=True, slots=True)
class Heartbeat:
    cancel_reason: str | None


def heartbeat(store: Store, lease: Lease, *, clock: Clock = utcnow) -> Heartbeat:
    """Extend the lease; raise LeaseLost if it is gone; report a requested cancellation."""
    now = clock()
    with store.unit_of_work() as uow:
        if not uow.extend_lease(lease.attempt_id, lease.lease_id, now,
                                now + timedelta(seconds=lease.ttl_seconds)):
            raise LeaseLost(f"attempt {lease.attempt_id} lost its lease")
        run = uow.runs.get(lease.run_id)
    if run.cancel_requested_by:
        return Heartbeat(f"cancelled by {run.cancel_requested_by}: {run.cancel_reason}")
    return Heartbeat(None)


def cancel_run(store: Store, run_text: str, *, by: str, reason: str,
               clock: Clock = utcnow) -> Run:
    run_id = store.resolve("run", run_text)
    now = clock()
    with store.unit_of_work() as uow:
        run = uow.runs.get(run_id)
        if run.status in TERMINAL_RUN:
            raise BadInput(f"run {run.run_id} already ended {run.status.value}")
        return request_cancellation(uow, run, by=by, reason=reason, now=now)


def request_cancellation(uow: UnitOfWork, run: Run, *, by: str, reason: str,
                         now: datetime) -> Run:
    """A run that no worker holds is cancelled at once; a running one is flagged for its worker."""
    if run.status in TERMINAL_RUN:
        return run
    uow.events.append(NewEvent(
        type=EventType.RUN_CANCELLED, created_at=now, task_id=run.task_id, run_id=run.run_id,
        payload={"by": by, "reason": reason, "phase": "requested", "status": run.status.value},
    ))
    flagged = replace(run, cancel_requested_by=by, cancel_reason=reason)
    if run.status in UNFINISHED_RUN and run.status not in (RunStatus.CREATED, RunStatus.QUEUED):
        uow.runs.save(flagged, expected_status=run.status.value)
        attempt = uow.attempts.get(run.active_attempt_id) if run.active_attempt_id else None
        if attempt is not None and attempt.lease_expires_at <= now:
            # Nobody holds it any more: no worker would ever see the flag. End it here.
            return fail_attempt(uow, flagged, attempt, status=AttemptStatus.LEASE_EXPIRED,
                                code="lease_expired", now=now,
                                reason=f"worker lease expired on attempt {attempt.attempt_number}")
        return flagged
    cancelled = f"cancelled by {by}: {reason}"
    if run.status is RunStatus.NEEDS_APPROVAL:  # the verdict stands; the run just ends
        ended = flagged.with_status(RunStatus.CANCELLED, now, has_verdict=True)
        uow.runs.save(ended, expected_status=run.status.value)
        _settle_task(uow, ended, VerdictStatus.CANCELLED, now)
        return ended
    decision = decide_verdict(VerdictInputs(
        autonomy=run.execution_spec.autonomy_level, judge_policy=run.execution_spec.judge_policy,
        patch=None, verification=None, judge=None, evidence=Evidence(), cancelled=cancelled,
    ))
    return finish_run(uow, flagged, decision, now=now, decided_by=f"cancelled by {by}")


def finish_run(uow: UnitOfWork, run: Run, decision: Decision, *, now: datetime,
               decided_by: str = RULES, attempt: Attempt | None = None,
               failure_summary: str | None = None) -> Run:
    """Store the verdict and end the run (and its attempt) where the verdict says, in one go."""
    verdict = Verdict(
        verdict_id=ids.new_id("verdict"), run_id=run.run_id, status=decision.status,
        pr_eligibility=decision.pr_eligibility, reasons=decision.reasons,
        evidence=decision.evidence, chain=decision.chain, decided_at=now, decided_by=decided_by,
        spec_digest=run.spec_digest,
    )
    target = run_status_for(decision.status, decision.pr_eligibility)
    summary = failure_summary or (None if target is not RunStatus.FAILED else decision.reasons[0])
    ended = replace(run.with_status(target, now, has_verdict=True), active_attempt_id=None,
                    failure_summary=summary)
    uow.verdicts.add(verdict)
    uow.runs.save(ended, expected_status=run.status.value)
    if attempt is not None:
        final = AttemptStatus.CANCELLED if decision.status is VerdictStatus.CANCELLED \
            else AttemptStatus.COMPLETED
        uow.attempts.save(attempt.with_status(final, now, end_reason=decision.reasons[0]),
                          expected_status=attempt.status.value)
    uow.events.append(
        NewEvent(type=EventType.VERDICT_DECIDED, created_at=now, task_id=run.task_id,
                 run_id=run.run_id, attempt_id=attempt.attempt_id if attempt else None,
                 payload={"verdictId": verdict.verdict_id, "status": verdict.status.value,
                          "prEligibility": verdict.pr_eligibility.value,
                          "reasons": list(verdict.reasons), "evidence": list(verdict.evidence),
                          "decidedBy": decided_by, "specDigest": run.spec_digest}),
        NewEvent(type=EventType.RUN_COMPLETED, created_at=now, task_id=run.task_id,
                 run_id=run.run_id, payload={"status": ended.status.value}),
    )
    _settle_task(uow, ended, decision.status, now)
    return ended


def fail_attempt(uow: UnitOfWork, run: Run, attempt: Attempt, *, status: AttemptStatus,
                 code: str, reason: str, now: datetime, final: Decision | None = None) -> Run:
    """An infrastructure failure or lost lease: a fresh attempt if the budget allows, else the
    run ends with `final` (by default FAILED_INFRASTRUCTURE citing `reason`)."""
    event = EventType.LEASE_EXPIRED if status is AttemptStatus.LEASE_EXPIRED \
        else EventType.ATTEMPT_FAILED
    uow.attempts.save(attempt.with_status(status, now, failure_code=code, end_reason=reason),
                      expected_status=attempt.status.value)
    _close_open_steps(uow, run, attempt, code=code, now=now)
    uow.events.append(NewEvent(
        type=event, created_at=now, task_id=run.task_id, run_id=run.run_id,
        attempt_id=attempt.attempt_id,
        payload={"attemptNumber": attempt.attempt_number, "failureCode": code, "reason": reason},
    ))
    if run.cancel_requested_by:
        cancelled = f"cancelled by {run.cancel_requested_by}: {run.cancel_reason}"
        decision = decide_verdict(VerdictInputs(
            autonomy=run.execution_spec.autonomy_level,
            judge_policy=run.execution_spec.judge_policy, patch=None, verification=None,
            judge=None, evidence=Evidence(), cancelled=cancelled))
        return finish_run(uow, run, decision, now=now, decided_by=f"cancelled by "
                          f"{run.cancel_requested_by}")
    if may_retry(attempt.attempt_number, run.budget):
        not_before = now + run.budget.backoff_before(attempt.attempt_number + 1)
        queued = replace(run.with_status(RunStatus.QUEUED, now), active_attempt_id=None,
                         not_before=not_before, failure_summary=reason)
        uow.runs.save(queued, expected_status=run.status.value)
        uow.events.append(NewEvent(
            type=EventType.RUN_QUEUED, created_at=now, task_id=run.task_id, run_id=run.run_id,
            payload={"reason": f"attempt {attempt.attempt_number} failed: {reason}",
                     "notBefore": not_before.isoformat()},
        ))
        return queued
    decision = final or decide_verdict(VerdictInputs(
        autonomy=run.execution_spec.autonomy_level, judge_policy=run.execution_spec.judge_policy,
        patch=None, verification=None, judge=None, evidence=Evidence(),
        infrastructure_failure=f"{reason} (attempt {attempt.attempt_number} of "
                               f"{run.budget.max_attempts})",
    ))
    return finish_run(uow, run, decision, now=now)


def _close_open_steps(uow: UnitOfWork, run: Run, attempt: Attempt, *, code: str,
                      now: datetime) -> None:
    """Steps the attempt never finished (its worker died or was stopped) end FAILED, so no
    step stays open for ever in the record."""
    for step in uow.steps.find(attempt_id=attempt.attempt_id, status=StepStatus.STARTED.value):
        uow.steps.save(step.finished(StepStatus.FAILED, now, failure_code=code),
                       expected_status=step.status.value)
        uow.events.append(NewEvent(
            type=EventType.STEP_COMPLETED, created_at=now, task_id=run.task_id, run_id=run.run_id,
            attempt_id=attempt.attempt_id, step_id=step.step_id,
            payload={"type": step.type.value, "status": StepStatus.FAILED.value,
                     "failureCode": code}))


def _settle_task(uow: UnitOfWork, run: Run, verdict: VerdictStatus, now: datetime) -> None:
    """The task leaves RUNNING when its last unfinished run ends."""
    task = uow.tasks.get(run.task_id)
    if task.status is not TaskStatus.RUNNING:
        return
    if not uow.unfinished_runs(run.task_id, besides=run.run_id):
        uow.tasks.save(task.with_status(task_status_after(verdict), now),
                       expected_status=task.status.value)


def reap_expired(store: Store, *, clock: Clock = utcnow) -> list[Run]:
    """Attempts whose lease ran out (their worker died or hangs) become LEASE_EXPIRED; their runs
    get a fresh attempt while the budget allows, else end FAILED_INFRASTRUCTURE."""
    now = clock()
    reaped: list[Run] = []
    with store.unit_of_work() as uow:
        for attempt_id in uow.expired_attempt_ids(now):
            attempt = uow.attempts.get(attempt_id)
            run = uow.runs.get(attempt.run_id)
            reason = f"worker lease expired on attempt {attempt.attempt_number}"
            if run.active_attempt_id != attempt.attempt_id or run.status in TERMINAL_RUN:
                uow.attempts.save(attempt.with_status(AttemptStatus.LEASE_EXPIRED, now,
                                                      failure_code="lease_expired",
                                                      end_reason=reason),
                                  expected_status=attempt.status.value)
                continue
            reaped.append(fail_attempt(uow, run, attempt, status=AttemptStatus.LEASE_EXPIRED,
                                       code="lease_expired", reason=reason, now=now))
    return reaped
