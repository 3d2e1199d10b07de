"""The storage port's contract, on each implementation: what the use cases rely on a store for.

A unit of work lands whole or not at all; `save` is a compare-and-set on the status; claims
take the oldest ready run; leases extend only while held and expire into the reaper's hands;
the event log is numbered and hash-chained; ids resolve by unique prefix.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from agentctl.config import defaults
from agentctl.domain.clock import utcnow
from agentctl.domain.enums import (
    EventType,
    RunStatus,
    TaskStatus,
    ToolDecision,
    ToolOutcome,
)
from agentctl.domain.errors import IllegalTransition, NotFound
from agentctl.domain.events import GENESIS_HASH, NewEvent
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Run
from agentctl.domain.step import ToolResult
from agentctl.domain.task import Task
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_task
from agentctl.services.attempts.recording import AttemptEvents
from agentctl.services.lifecycle.runs import cancel_run, create_run, heartbeat, lease_run
from agentctl.services.ports import CallRequest
from agentctl.services.unit_of_work import Storage
from agentctl.testing import InMemoryStorage


def a_task(storage: Storage, repo: Path, tmp_path: Path) -> Task:
    return submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction="fix the greeting"), cwd=tmp_path)


def a_run(storage: Storage, task: Task, tmp_path: Path) -> Run:
    return create_run(storage, defaults(), task.task_id, agent=parse_agent_spec("noop", tmp_path))


def test_a_unit_of_work_that_raises_lands_nothing(storage: Storage, repo: Path,
                                                  tmp_path: Path) -> None:
    task = a_task(storage, repo, tmp_path)
    with pytest.raises(RuntimeError), storage.unit_of_work() as uow:
        uow.tasks.save(task.with_status(TaskStatus.CANCELLED, utcnow()))
        uow.events.append(NewEvent(type=EventType.TASK_CANCELLED, created_at=utcnow(),
                                   task_id=task.task_id, payload={}))
        raise RuntimeError("the use case failed half way")
    with storage.unit_of_work() as uow:
        assert uow.tasks.get(task.task_id).status is task.status
    with storage.reads() as reads:
        assert reads.task(task.task_id).status is task.status


def test_save_is_a_compare_and_set_on_the_status_it_was_read_with(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    task = a_task(storage, repo, tmp_path)
    with storage.unit_of_work() as uow:
        uow.tasks.save(task.with_status(TaskStatus.CANCELLED, utcnow()),
                       expected_status=task.status)
    with pytest.raises(IllegalTransition), storage.unit_of_work() as uow:
        uow.tasks.save(task.with_status(TaskStatus.RUNNING, utcnow()),
                       expected_status=task.status)  # stale: it is cancelled now
    with storage.unit_of_work() as uow:
        assert uow.tasks.get(task.task_id).status is TaskStatus.CANCELLED
        with pytest.raises(NotFound):
            uow.tasks.get("task_01ZZZZZZZZZZZZZZZZZZZZZZZZ")


def test_find_filters_by_a_status_given_as_its_enum(storage: Storage, repo: Path,
                                                    tmp_path: Path) -> None:
    kept, cancelled = a_task(storage, repo, tmp_path), a_task(storage, repo, tmp_path)
    with storage.unit_of_work() as uow:
        uow.tasks.save(cancelled.with_status(TaskStatus.CANCELLED, utcnow()),
                       expected_status=cancelled.status)
    with storage.unit_of_work() as uow:
        assert [t.task_id for t in uow.tasks.find(status=TaskStatus.CANCELLED)] == \
            [cancelled.task_id]
        assert [t.task_id for t in uow.tasks.find(status=kept.status)] == [kept.task_id]
        assert uow.tasks.find(status=TaskStatus.CANCELLED, task_id=kept.task_id) == []


def test_the_claim_takes_the_oldest_ready_run_and_skips_one_waiting_out_a_backoff(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    task = a_task(storage, repo, tmp_path)
    first, second = a_run(storage, task, tmp_path), a_run(storage, task, tmp_path)
    assert (first.number, second.number) == (1, 2)
    now = utcnow()
    with storage.unit_of_work() as uow:
        assert uow.next_run_number(task.task_id) == 3
        assert uow.unfinished_runs(task.task_id, besides=first.run_id) == 1
        uow.runs.save(replace(first, not_before=now + timedelta(minutes=5)),
                      expected_status=RunStatus.QUEUED)
    with storage.unit_of_work() as uow:
        claimed = uow.next_queued_run(now)
        assert claimed is not None and claimed.run_id == second.run_id
    with storage.unit_of_work() as uow:
        later = uow.next_queued_run(now + timedelta(minutes=6))
        assert later is not None and later.run_id == first.run_id


def test_a_lease_extends_only_while_held_and_then_expires_into_the_reapers_hands(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    now = utcnow()
    lease = lease_run(storage, worker_id="w", ttl_seconds=10, run_id=run.run_id,
                      clock=lambda: now)
    assert lease is not None
    with storage.unit_of_work() as uow:
        assert uow.run_status(run.run_id) is RunStatus.LEASED
        assert not uow.extend_lease(lease.attempt_id, "lease_not_mine", now, now)
        assert uow.extend_lease(lease.attempt_id, lease.lease_id, now,
                                now + timedelta(seconds=20))
        assert uow.expired_attempts(now + timedelta(seconds=15)) == []
    with storage.unit_of_work() as uow:
        (expired,) = uow.expired_attempts(now + timedelta(seconds=21))
        assert expired.attempt_id == lease.attempt_id
    assert heartbeat(storage, lease, clock=lambda: now).cancel is None


def test_events_are_numbered_and_hash_chained_in_commit_order(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    cancel_run(storage, run.run_id, by="alice", reason="not needed")
    with storage.reads() as reads:
        record = reads.record(run.run_id)
    assert record.run.status is RunStatus.CANCELLED
    types = [event.type for event in record.events]
    assert types[:2] == [EventType.RUN_CREATED, EventType.RUN_QUEUED]
    assert EventType.RUN_CANCELLED in types
    created = record.events[0]
    assert dict(created.payload).keys() >= {"number", "baseRef", "baseCommit", "specDigest",
                                            "agent", "agentDigest"}
    seqs = [event.seq for event in record.events]
    assert seqs == sorted(seqs)
    for before, after in zip(record.events, record.events[1:], strict=False):
        if after.seq == before.seq + 1:
            assert after.prev_hash == before.hash
    assert record.events[0].prev_hash != GENESIS_HASH  # the task's events came first


def test_ids_resolve_by_unique_prefix(storage: Storage, repo: Path, tmp_path: Path) -> None:
    task = a_task(storage, repo, tmp_path)
    assert storage.resolve("task", task.task_id[len("task_"):][:12]) == task.task_id
    with storage.reads() as reads:
        assert reads.task(task.task_id[:16]).task_id == task.task_id
    with pytest.raises(NotFound):
        storage.resolve("task", "ZZZZZZZZ")


def test_a_store_names_the_errors_of_its_own_outage_in_one_line(storage: Storage) -> None:
    """A worker outlives what `outage_errors` names (and no bug): a database store names its
    drivers' errors and the disk's, the in-memory one, never away, nothing."""
    outages = storage.outage_errors()
    if isinstance(storage, InMemoryStorage):
        assert outages == ()
    else:
        assert issubclass(sqlite3.OperationalError, outages) and issubclass(OSError, outages)
        assert not issubclass(ValueError, outages) and not issubclass(AssertionError, outages)
        import psycopg  # its driver's own errors, on the store that uses it

        assert issubclass(psycopg.OperationalError, outages) is ("postgresql" in repr(
            getattr(storage, "home", "")))
    full = OSError(28, "No space left on device", "/data/agentctl.db")
    assert "\n" not in storage.outage_text(full)
    if not isinstance(storage, InMemoryStorage):
        assert storage.outage_text(full) == "cannot write /data/agentctl.db: No space left on device"


def test_reads_give_a_runs_pull_requests_first_opened_first(storage: Storage, repo: Path,
                                                            tmp_path: Path) -> None:
    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    with storage.reads() as reads:
        assert reads.pull_requests(run.run_id) == []
    opened = [PullRequest(
        pr_id=f"pr_0{n}", run_id=run.run_id, repository=str(repo), branch=f"agentctl/b{n}",
        commit_sha="c" * 40, base_commit="b" * 40, remote=None, draft=False,
        body_artifact="artifact_x", url=None, created_by="tester",
        created_at=utcnow().replace(microsecond=0)) for n in (2, 1)]
    with storage.unit_of_work() as uow:
        uow.pull_requests.add_many(opened)
    with storage.reads() as reads:
        assert reads.pull_requests(run.run_id) == sorted(opened, key=lambda pr: pr.pr_id)
        assert reads.pull_requests("run_none") == []


def test_pending_writes_land_only_with_the_unit_of_work_that_writes_them_in_order(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    """What the attempt ledger batches between transactions: held by the store (the SQL one as
    encoded rows), written in the order added, its first event sealing the rows, nothing of it
    landing from a unit of work that fails; a call added whole (`add_call`, the ledger's hot
    path) lands as its parts added one by one do."""
    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    lease = lease_run(storage, worker_id="w", ttl_seconds=600, run_id=run.run_id)
    assert lease is not None
    records = AttemptEvents(lease, run.spec_digest)
    pending = storage.pending()
    calls = []
    for number in range(3):
        now = utcnow()
        step, call = records.call(CallRequest(
            tool="fs.write", arguments_json=f'{{"path": "f{number}.txt"}}',
            decision=ToolDecision.ALLOWED, matched_rule="workspace", denial_reason=None,
            requested_at=now), ToolResult(outcome=ToolOutcome.OK, exit_code=0), now)
        events = records.call_events(call, now, finished=True)
        if number != 1:  # the first event comes through either path
            pending.add_call(step, call, events)
        else:
            pending.add_steps([step])
            pending.add_tool_calls([call])
            pending.append_events(events)
        calls.append(call)
    with pytest.raises(RuntimeError), storage.unit_of_work() as uow:
        uow.write_pending(pending)
        raise RuntimeError("the batch's transaction fails")
    with storage.reads() as reads:
        assert reads.tool_calls(run.run_id) == []
    with storage.unit_of_work() as uow:
        uow.write_pending(pending)
    with storage.reads() as reads:
        record = reads.record(run.run_id)
    assert list(record.tool_calls) == calls
    assert [step.tool_call_id for step in record.steps] == [call.tool_call_id for call in calls]
    assert [(event.type, event.payload["toolCallId"]) for event in record.events[-6:]] == [
        (kind, call.tool_call_id) for call in calls
        for kind in (EventType.TOOL_CALL_REQUESTED, EventType.TOOL_CALL_COMPLETED)]
    assert storage.audit().ok, storage.audit().failure()
