"""Human approval of a verdict: append-only, never erasing a reason, never rescuing a failure."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from agentctl.domain import ids
from agentctl.domain.audit import digest
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import ApprovalDecision, EventType, PrEligibility, RunStatus
from agentctl.domain.errors import BadInput, NotFound, PolicyDenied
from agentctl.domain.events import NewEvent
from agentctl.domain.run import Run
from agentctl.domain.verdict import Approval, Verdict
from agentctl.services.unit_of_work import Events, IdKind, Repository


class ApprovalWork(Protocol):
    """What an approval reads and writes in its transaction: the run, its verdict, its earlier
    approvals, and the events."""

    @property
    def runs(self) -> Repository[Run]: ...
    @property
    def verdicts(self) -> Repository[Verdict]: ...
    @property
    def approvals(self) -> Repository[Approval]: ...
    @property
    def events(self) -> Events: ...


class ApprovalStore(Protocol):
    """The part of the storage port an approval uses (any `Storage` is one)."""

    def unit_of_work(self) -> AbstractContextManager[ApprovalWork]: ...
    def resolve(self, kind: IdKind, text: str) -> str: ...


def record_approval(storage: ApprovalStore, run_text: str, *, decision: ApprovalDecision, by: str,
                    reason: str, clock: Clock = utcnow) -> Approval:
    """Approve or reject a run's verdict. Approving needs a verdict that awaits a human;
    rejecting may also veto one that is eligible without a human."""
    if not by.strip() or not reason.strip():
        raise BadInput("an approval needs --by WHO and --reason TEXT")
    run_id = storage.resolve("run", run_text)
    now = clock()
    with storage.unit_of_work() as uow:
        run = uow.runs.get(run_id)
        verdicts = uow.verdicts.find(run_id=run.run_id)
        if not verdicts:
            raise NotFound(f"run {run.run_id} has no verdict yet (status {run.status.value})")
        verdict = verdicts[0]
        if verdict.pr_eligibility is PrEligibility.NOT_ELIGIBLE:
            raise PolicyDenied(
                f"run {run.run_id} is {verdict.status.value} and NOT_ELIGIBLE; an approval cannot "
                f"make it eligible: {'; '.join(verdict.reasons)}")
        previous = uow.approvals.find(run_id=run.run_id, order_by="approval_id")
        if previous and previous[-1].decision is ApprovalDecision.REJECTED:
            raise PolicyDenied(f"run {run.run_id} was rejected by {previous[-1].by}; a rejection "
                               "is final (start a new run)")
        awaiting = run.status is RunStatus.NEEDS_APPROVAL
        if decision is ApprovalDecision.APPROVED and not awaiting:
            raise BadInput(f"run {run.run_id} is {run.status.value} with "
                           f"{verdict.pr_eligibility.value}: it awaits no approval")
        approval = Approval(approval_id=ids.new_id("approval"), run_id=run.run_id,
                            verdict_id=verdict.verdict_id, decision=decision, by=by.strip(),
                            reason=reason.strip(), created_at=now)
        uow.approvals.add(approval)
        events = [NewEvent(type=EventType.APPROVAL_RECORDED, created_at=now, task_id=run.task_id,
                           run_id=run.run_id, payload={
                               "approvalId": approval.approval_id, "decision": decision.value,
                               "by": approval.by, "reason": approval.reason,
                               "verdictId": verdict.verdict_id,
                               "verdictStatus": verdict.status.value,
                               "approvalDigest": digest(approval)})]
        if awaiting:
            uow.runs.save(run.closed(verdict, now), expected_status=run.status)
            events.append(NewEvent(type=EventType.RUN_COMPLETED, created_at=now,
                                   task_id=run.task_id, run_id=run.run_id,
                                   payload={"status": RunStatus.COMPLETED.value,
                                            "approval": decision.value}))
        uow.events.append_many(events)
    return approval
