"""How an attempt ends, and what that does to its run, its task and the record: one rule.

Every way a run or an attempt stops (the pipeline's verdict, a cancellation, a clone or verifier
that could not run, a worker that died or was stopped) is one `AttemptEnd` value, and `conclude`
turns it into the records to store. Storing is the caller's job; deciding is done here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agentctl.domain import ids
from agentctl.domain.audit import digest
from agentctl.domain.enums import (
    AttemptStatus,
    EventType,
    RunStatus,
    StepStatus,
    TaskStatus,
    VerdictStatus,
)
from agentctl.domain.events import NewEvent
from agentctl.domain.run import (
    BEFORE_PR,
    Attempt,
    Run,
    may_retry,
    task_status_after,
)
from agentctl.domain.step import Step
from agentctl.domain.task import Task
from agentctl.domain.transitions import is_terminal
from agentctl.domain.verdict import Decision, Verdict, cancelled, infrastructure_failed

RULES = "agentctl rules"
_LIVE = (AttemptStatus.STARTING, AttemptStatus.ACTIVE)


@dataclass(frozen=True, slots=True)
class Completed:
    """The attempt gathered its evidence and the verdict is decided."""

    decision: Decision


@dataclass(frozen=True, slots=True)
class Cancelled:
    """A person stopped the run (`run cancel`, `task cancel`, Ctrl-C)."""

    by: str
    reason: str

    @property
    def text(self) -> str:
        return f"cancelled by {self.by}: {self.reason}"


@dataclass(frozen=True, slots=True)
class InfraFailed:
    """Something outside the agent's control failed: a fresh attempt while the budget lasts,
    else the run ends with `final` (by default FAILED_INFRASTRUCTURE citing `reason`).
    `retry=False` (a bug of agentctl's) ends the run at once: another attempt would only
    meet the same bug."""

    code: str
    reason: str
    final: Decision | None = None
    lease_expired: bool = False
    retry: bool = True


@dataclass(frozen=True, slots=True)
class LostLease:
    """Another attempt owns the run now: this one may write nothing more."""

    reason: str


AttemptEnd = Completed | Cancelled | InfraFailed | LostLease


@dataclass(frozen=True, slots=True, kw_only=True)
class Situation:
    """What `conclude` needs to know, read in the transaction that will store its answer."""

    run: Run
    task: Task
    attempt: Attempt | None = None
    verdict: Verdict | None = None  # the run's verdict, if it already has one (NEEDS_APPROVAL)
    open_steps: tuple[Step, ...] = ()  # the attempt's steps still STARTED
    other_unfinished_runs: int = 0  # the task's runs besides this one that have not ended


@dataclass(frozen=True, slots=True, kw_only=True)
class Conclusion:
    """The records to store, each a compare-and-set on the status it was read with."""

    run: Run | None = None  # None: the run is not this attempt's to change any more
    attempt: Attempt | None = None
    verdict: Verdict | None = None  # a new verdict, to add
    task: Task | None = None  # the task, when its status changes
    closed_steps: tuple[Step, ...] = ()
    events: tuple[NewEvent, ...] = ()


def conclude(end: Completed | Cancelled | InfraFailed, now: datetime,
             situation: Situation) -> Conclusion:
    """The one place a run ends, is queued again for a fresh attempt, or is let go."""
    match end:
        case Completed(decision):
            return _decided(situation, decision, now, decided_by=RULES)
        case Cancelled():
            return _cancelled(situation, end, now)
        case InfraFailed():
            return _infra_failed(situation, end, now)


def _decided(situation: Situation, decision: Decision, now: datetime, *, decided_by: str,
             attempt: Attempt | None = None, closed: tuple[Step, ...] = (),
             earlier: tuple[NewEvent, ...] = ()) -> Conclusion:
    """Store the verdict and end the run (and its attempt, if still live) where it says."""
    run = situation.run
    attempt = attempt or situation.attempt
    verdict = Verdict(
        verdict_id=ids.new_id("verdict"), run_id=run.run_id, status=decision.status,
        pr_eligibility=decision.pr_eligibility, reasons=decision.reasons,
        evidence=decision.evidence, chain=decision.chain, decided_at=now, decided_by=decided_by,
        spec_digest=run.spec_digest, tree_id=decision.tree_id,
    )
    ended = run.concluded(verdict, now)
    if attempt is not None and attempt.status in _LIVE:
        final = AttemptStatus.CANCELLED if decision.status is VerdictStatus.CANCELLED \
            else AttemptStatus.COMPLETED
        attempt = attempt.with_status(final, now, end_reason=decision.reasons[0])
    events = (
        *earlier,
        _event(run, EventType.VERDICT_DECIDED, now,
               attempt_id=attempt.attempt_id if attempt else None,
               verdictId=verdict.verdict_id, status=verdict.status.value,
               prEligibility=verdict.pr_eligibility.value, reasons=list(verdict.reasons),
               evidence=list(verdict.evidence), decidedBy=decided_by,
               specDigest=run.spec_digest, treeId=verdict.tree_id, verdictDigest=digest(verdict)),
        _event(run, EventType.RUN_COMPLETED, now, status=ended.status.value),
    )
    return Conclusion(run=ended, attempt=attempt, verdict=verdict, closed_steps=closed,
                      task=_settled(situation, decision.status, now), events=events)


def _cancelled(situation: Situation, end: Cancelled, now: datetime) -> Conclusion:
    run = situation.run
    if situation.verdict is not None:  # NEEDS_APPROVAL: the verdict stands, the run just ends
        ended = run.closed(situation.verdict, now, cancelled=True)
        return Conclusion(run=ended, task=_settled(situation, VerdictStatus.CANCELLED, now),
                          events=(_event(run, EventType.RUN_COMPLETED, now,
                                         status=ended.status.value, by=end.by,
                                         verdictStatus=situation.verdict.status.value,
                                         note=f"cancelled {BEFORE_PR}"),))
    closed = _closed_steps(situation, now, code="cancelled")
    return _decided(situation, cancelled(end.text, run.execution_spec.autonomy_level), now,
                    decided_by=f"cancelled by {end.by}", closed=closed,
                    earlier=_step_events(run, closed))


def _infra_failed(situation: Situation, end: InfraFailed, now: datetime) -> Conclusion:
    run, attempt = situation.run, situation.attempt
    if attempt is None:
        raise ValueError("an infrastructure failure ends an attempt; this run has none")
    status = AttemptStatus.LEASE_EXPIRED if end.lease_expired else AttemptStatus.FAILED
    ended = attempt.with_status(status, now, failure_code=end.code, end_reason=end.reason)
    if run.active_attempt_id != attempt.attempt_id or is_terminal(run.status):
        return Conclusion(attempt=ended)  # the run moved on without this attempt
    closed = _closed_steps(situation, now, code=end.code)
    number = attempt.attempt_number
    events = (*_step_events(run, closed), _event(
        run, EventType.LEASE_EXPIRED if end.lease_expired else EventType.ATTEMPT_FAILED, now,
        attempt_id=attempt.attempt_id, attemptNumber=number, failureCode=end.code,
        reason=end.reason))
    if run.cancel_requested_by:  # nobody works on it any more: end it as the person asked
        decision = cancelled(f"cancelled by {run.cancel_requested_by}: {run.cancel_reason}",
                             run.execution_spec.autonomy_level)
        return _decided(situation, decision, now, attempt=ended, closed=closed, earlier=events,
                        decided_by=f"cancelled by {run.cancel_requested_by}")
    if end.retry and may_retry(number, run.budget):
        not_before = now + run.budget.backoff_before(number + 1)
        queued = run.requeued(now, not_before=not_before, reason=end.reason)
        events += (_event(run, EventType.RUN_QUEUED, now,
                          reason=f"attempt {number} failed: {end.reason}",
                          notBefore=not_before.isoformat()),)
        return Conclusion(run=queued, attempt=ended, closed_steps=closed, events=events)
    decision = end.final or infrastructure_failed(
        f"{end.reason} (attempt {number} of {run.budget.max_attempts})",
        run.execution_spec.autonomy_level)
    return _decided(situation, decision, now, decided_by=RULES, attempt=ended, closed=closed,
                    earlier=events)


def lease_expired(attempt: Attempt) -> InfraFailed:
    return InfraFailed(code="lease_expired", lease_expired=True,
                       reason=f"worker lease expired on attempt {attempt.attempt_number}")


def on_cancel_request(run: Run, attempt: Attempt | None, *, by: str, reason: str,
                      now: datetime) -> Cancelled | InfraFailed | None:
    """What a cancellation request does at once: a run no worker holds ends now (a queued one
    CANCELLED, one whose worker's lease ran out as that attempt's end); a held one is only
    flagged (None), and its worker ends it at its next heartbeat."""
    if run.status in (RunStatus.CREATED, RunStatus.QUEUED, RunStatus.NEEDS_APPROVAL):
        return Cancelled(by=by, reason=reason)
    if attempt is not None and attempt.lease_expires_at <= now:
        return lease_expired(attempt)
    return None


def _closed_steps(situation: Situation, now: datetime, *, code: str) -> tuple[Step, ...]:
    """Steps the attempt never finished end FAILED, so no step stays open for ever."""
    return tuple(step.finished(StepStatus.FAILED, now, failure_code=code)
                 for step in situation.open_steps)


def _step_events(run: Run, steps: tuple[Step, ...]) -> tuple[NewEvent, ...]:
    return tuple(_event(run, EventType.STEP_COMPLETED, step.ended_at or step.started_at,
                        attempt_id=step.attempt_id, step_id=step.step_id, type=step.type.value,
                        status=step.status.value, failureCode=step.failure_code)
                 for step in steps)


def _settled(situation: Situation, verdict: VerdictStatus, now: datetime) -> Task | None:
    """The task leaves RUNNING when its last unfinished run ends."""
    task = situation.task
    if task.status is not TaskStatus.RUNNING or situation.other_unfinished_runs:
        return None
    return task.with_status(task_status_after(verdict), now)


def _event(run: Run, type_: EventType, now: datetime, *, attempt_id: str | None = None,
           step_id: str | None = None, **payload: object) -> NewEvent:
    return NewEvent(type=type_, created_at=now, task_id=run.task_id, run_id=run.run_id,
                    attempt_id=attempt_id, step_id=step_id, payload=payload)
