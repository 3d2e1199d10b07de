"""Fencing by lease: once an attempt's lease has run out, none of its writes lands, least of all
a successful result; the run stays open for a fresh attempt, which can finish it. On each
implementation of the storage port (tests/contract/conftest.py).

Time passes through a clock the tests move forward, so a loaded machine cannot make a lease
expire early (mid-setup) or late; the store compares the same timestamps a real sleep would give.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from agentctl.config import load
from agentctl.domain.clock import utcnow
from agentctl.domain.ending import Completed
from agentctl.domain.enums import (
    AttemptStatus,
    EventType,
    PrEligibility,
    RunStatus,
    StepType,
    VerdictStatus,
)
from agentctl.domain.errors import LeaseLost
from agentctl.domain.run import Run
from agentctl.domain.verdict import ChainLink, Decision
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_task
from agentctl.services.lifecycle.ledger import Ledger
from agentctl.services.lifecycle.runs import create_run, lease_run, reap_expired
from agentctl.services.unit_of_work import Storage

TTL = 1.0  # seconds of lease without a heartbeat
SUCCESS = Decision(
    status=VerdictStatus.SUCCESS, pr_eligibility=PrEligibility.ELIGIBLE_FOR_AUTO_PR,
    reasons=("boundary passed, every check passed",), evidence=(),
    chain=(ChainLink(check="boundary", passed=True, detail="ok"),),
)


class MovableClock:
    """Real time plus however far the test has moved it on."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return utcnow() + self.offset

    def sleep(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def queued(storage: Storage, repo: Path, tmp_path: Path) -> Run:
    settings = tmp_path / "agentctl.toml"
    settings.write_text("[budget]\nmax_attempts = 2\nbackoff_initial_seconds = 0\n")
    config = load(settings)
    task = submit_task(storage, config, TaskRequest(repository=str(repo), task_type="bug_fix",
                                                  instruction="fix the greeting"), cwd=tmp_path)
    return create_run(storage, config, task.task_id, agent=parse_agent_spec("noop", tmp_path))


def worked_up_to_judging(recorder: Ledger) -> None:
    """Everything but the verdict: a finish() now is legal, if the lease still holds."""
    recorder.activate("/nonexistent/attempt")
    recorder.advance(RunStatus.RUNNING_AGENT, EventType.WORKSPACE_PREPARED)
    recorder.advance(RunStatus.VERIFYING, EventType.VERIFIER_STARTED)
    recorder.advance(RunStatus.JUDGING, EventType.VERIFIER_COMPLETED)


def run_and_verdicts(storage: Storage, run_id: str) -> tuple[Run, list[object]]:
    with storage.unit_of_work() as uow:
        return uow.runs.get(run_id), list(uow.verdicts.find(run_id=run_id))


def test_expired_attempt_cannot_submit_a_successful_result(
        storage: Storage, queued: Run, clock: MovableClock) -> None:
    lease = lease_run(storage, worker_id="worker-a", ttl_seconds=TTL, run_id=queued.run_id,
                      clock=clock)
    assert lease is not None
    recorder = Ledger(storage, lease, spec_digest=queued.spec_digest, clock=clock)
    worked_up_to_judging(recorder)
    clock.sleep(TTL * 2)

    assert recorder.end(Completed(SUCCESS)) is None  # refused: nothing of it lands

    run, verdicts = run_and_verdicts(storage, queued.run_id)
    assert verdicts == []
    assert run.status is RunStatus.JUDGING
    assert run.completed_at is None


def test_an_expired_attempt_can_write_nothing_else_either(
        storage: Storage, queued: Run, clock: MovableClock) -> None:
    lease = lease_run(storage, worker_id="worker-a", ttl_seconds=TTL, run_id=queued.run_id,
                      clock=clock)
    assert lease is not None
    recorder = Ledger(storage, lease, spec_digest=queued.spec_digest, clock=clock)
    recorder.activate("/nonexistent/attempt")
    clock.sleep(TTL * 2)

    with pytest.raises(LeaseLost):
        recorder.begin_step(StepType.LOAD_CONTEXT, "late step", live=True)
    with pytest.raises(LeaseLost):
        recorder.advance(RunStatus.RUNNING_AGENT, EventType.WORKSPACE_PREPARED)
    with storage.unit_of_work() as uow:
        assert uow.steps.find(attempt_id=lease.attempt_id) == []
        assert uow.runs.get(queued.run_id).status is RunStatus.PREPARING_WORKSPACE


def test_after_the_reaper_a_fresh_attempt_finishes_the_run_and_the_stale_one_still_cannot(
        storage: Storage, queued: Run, clock: MovableClock) -> None:
    stale = lease_run(storage, worker_id="worker-a", ttl_seconds=TTL, run_id=queued.run_id,
                      clock=clock)
    assert stale is not None
    worked_up_to_judging(Ledger(storage, stale, spec_digest=queued.spec_digest, clock=clock))
    clock.sleep(TTL * 2)

    (requeued,) = reap_expired(storage, clock=clock)
    assert requeued.status is RunStatus.QUEUED
    fresh = lease_run(storage, worker_id="worker-b", ttl_seconds=30, run_id=queued.run_id,
                      clock=clock)
    assert fresh is not None and fresh.attempt_number == 2

    stale_ledger = Ledger(storage, stale, spec_digest=queued.spec_digest, clock=clock)
    assert stale_ledger.end(Completed(SUCCESS)) is None
    assert run_and_verdicts(storage, queued.run_id)[1] == []

    recorder = Ledger(storage, fresh, spec_digest=queued.spec_digest, clock=clock)
    worked_up_to_judging(recorder)
    finished = recorder.end(Completed(SUCCESS))
    assert finished is not None
    assert finished.status is RunStatus.COMPLETED
    run, verdicts = run_and_verdicts(storage, queued.run_id)
    assert len(verdicts) == 1 and run.status is RunStatus.COMPLETED
    with storage.unit_of_work() as uow:
        statuses = {a.attempt_number: a.status for a in uow.attempts.find(run_id=run.run_id)}
    assert statuses == {1: AttemptStatus.LEASE_EXPIRED, 2: AttemptStatus.COMPLETED}

