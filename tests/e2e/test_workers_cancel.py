"""Cancelling runs and tasks while workers hold them or before any worker has."""

from __future__ import annotations

import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.workers_support import (
    Fleet,
    attempt_summary,
    clean_stderr,
    event_types,
    process_gone,
    wait_until,
)


def test_cancelling_a_queued_run_ends_it_at_once_with_a_cancelled_verdict_and_no_attempt(
        fleet: Fleet) -> None:
    run_id = fleet.queue(fleet.submit())
    cancelled = fleet.json("run", "cancel", run_id, "--by", "alice", "--reason", "not needed")
    assert cancelled["status"] == "CANCELLED"

    tree, events = fleet.tree(run_id), fleet.events(run_id)
    assert tree["status"] == "CANCELLED"
    assert tree["attempts"] == []
    assert tree["verdict"]["status"] == "CANCELLED"
    reasons = " ".join(tree["verdict"]["reasons"])
    assert "alice" in reasons and "not needed" in reasons
    assert event_types(events)[-3:] == ["RunCancelled", "VerdictDecided", "RunCompleted"]

    idle = fleet.cli("worker", "--once", "--poll", "0.1")
    assert "done: 0 attempt(s)" in idle.stderr
    assert fleet.tree(run_id) == tree
    fleet.audit_ok()


def test_cancelling_a_running_run_kills_its_agent_removes_its_workspace_and_records_who(
        fleet: Fleet) -> None:
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=30, later=30))
    worker = fleet.start_worker("--lease-ttl", "2", "--poll", "0.2")
    agent_pid = fleet.wait_for_agent(run_id=run_id)
    assert len(fleet.workspaces()) == 1

    requested = fleet.json("run", "cancel", run_id, "--by", "bob", "--reason", "wrong branch")
    assert requested["status"] == "RUNNING_AGENT"
    wait_until(lambda: fleet.status(run_id) == "CANCELLED", timeout=60,
               what="the worker to stop the cancelled run")
    wait_until(lambda: process_gone(agent_pid), timeout=30, what="the agent to be killed")
    wait_until(lambda: not fleet.workspaces(), timeout=30, what="the workspace to be removed")

    tree, events = fleet.tree(run_id), fleet.events(run_id)
    assert attempt_summary(tree) == [(1, "CANCELLED", None)]
    assert [s["status"] for s in tree["attempts"][0]["steps"] if s["status"] == "STARTED"] == []
    assert tree["verdict"]["status"] == "CANCELLED"
    reasons = " ".join(tree["verdict"]["reasons"])
    assert "bob" in reasons and "wrong branch" in reasons
    types = event_types(events)
    assert types.count("VerdictDecided") == 1
    assert types.index("RunCancelled") < types.index("VerdictDecided")
    assert not Path(next(e["payload"]["workspace"] for e in events
                         if e["type"] == "WorkspacePrepared")).exists()

    assert worker.process.poll() is None  # a cancelled run is not the worker's end
    worker.process.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=15) == 130
    clean_stderr(worker.stderr())
    assert fleet.tree(run_id) == tree
    fleet.audit_ok()


def test_cancelling_a_task_cancels_its_queued_and_running_runs_and_refuses_new_ones(
        fleet: Fleet, error_line: Any) -> None:
    task_id = fleet.submit()
    running = fleet.queue(task_id, fleet.hanging_plan(first=30, later=30))
    worker = fleet.start_worker("--lease-ttl", "2", "--poll", "0.2")
    agent_pid = fleet.wait_for_agent(run_id=running)
    queued = [fleet.queue(task_id) for _ in range(2)]
    assert {fleet.status(run_id) for run_id in queued} == {"QUEUED"}

    cancelled = fleet.json("task", "cancel", task_id, "--by", "carol", "--reason", "obsolete")
    assert cancelled["status"] == "CANCELLED"
    assert {fleet.status(run_id) for run_id in queued} == {"CANCELLED"}  # at once
    wait_until(lambda: fleet.status(running) == "CANCELLED", timeout=15,
               what="the worker to stop the task's running run")
    wait_until(lambda: process_gone(agent_pid), timeout=5, what="the agent to be killed")

    trees = [fleet.tree(run) for run in (running, *queued)]
    for tree in trees:
        assert tree["status"] == "CANCELLED"
        assert tree["verdict"]["status"] == "CANCELLED"
        assert "carol" in " ".join(tree["verdict"]["reasons"])
    assert attempt_summary(trees[0]) == [(1, "CANCELLED", None)]
    assert [tree["attempts"] for tree in trees[1:]] == [[], []]

    for detach in ((), ("--detach",)):
        refused = fleet.cli("run", "start", task_id, *detach, expect=(2,))
        assert "CANCELLED" in error_line(refused.stderr)
    assert len(fleet.json("run", "list", "--task", task_id)) == 3
    assert fleet.json("task", "show", task_id)["status"] == "CANCELLED"

    worker.process.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=15) == 130
    clean_stderr(worker.stderr())
    fleet.audit_ok()


def test_cancelling_a_run_while_it_verifies_kills_the_verifier_and_ends_it_cancelled(
        fleet: Fleet) -> None:
    fleet.configure(max_attempts=2, verify=[fleet.hanging_command(first=30, later=30)])
    run_id = fleet.queue(fleet.submit(), fleet.writing_plan())
    worker = fleet.start_worker("--lease-ttl", "2", "--poll", "0.2")
    verifier_pid = fleet.wait_for_agent(run_id=run_id, status="VERIFYING")

    fleet.cli("run", "cancel", run_id, "--by", "erin", "--reason", "superseded")
    wait_until(lambda: fleet.status(run_id) == "CANCELLED", timeout=15,
               what="the worker to stop the cancelled run")
    wait_until(lambda: process_gone(verifier_pid), timeout=5, what="the verifier to be killed")
    wait_until(lambda: not fleet.workspaces(), timeout=5, what="the workspace to be removed")

    tree = fleet.tree(run_id)
    assert attempt_summary(tree) == [(1, "CANCELLED", None)]
    assert tree["verdict"]["status"] == "CANCELLED"
    assert "erin" in " ".join(tree["verdict"]["reasons"])
    assert len(fleet.agent_pids()) == 1  # killed, not retried as an infrastructure failure
    worker.process.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=15) == 130
    clean_stderr(worker.stderr())
    fleet.audit_ok()


def _run_whose_worker_died(fleet: Fleet) -> str:
    """A run left RUNNING_AGENT by a worker killed with SIGKILL, its 2-second lease run out."""
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=30, later=0))
    doomed = fleet.start_worker("--lease-ttl", "2", "--poll", "0.2")
    fleet.wait_for_agent(run_id=run_id)
    doomed.signal_group(signal.SIGKILL)
    doomed.wait(timeout=10)
    fleet.stop_everything()  # the agent too, in its own session: as a machine crash would
    expires = str(fleet.query("SELECT lease_expires_at FROM attempt")[0][0])
    wait_until(lambda: _utc_iso() > expires, timeout=10, what="the dead worker's lease to expire")
    assert fleet.status(run_id) == "RUNNING_AGENT"
    return run_id


def _utc_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def test_a_cancelled_run_whose_worker_died_ends_cancelled_not_retried_when_a_worker_reaps_it(
        fleet: Fleet) -> None:
    run_id = _run_whose_worker_died(fleet)
    fleet.cli("run", "cancel", run_id, "--by", "frank", "--reason", "stuck")

    reaper = fleet.cli("worker", "--once", "--poll", "0.1")
    assert "done: 0 attempt(s)" in reaper.stderr
    tree = fleet.tree(run_id)
    assert tree["status"] == "CANCELLED"
    assert tree["verdict"]["status"] == "CANCELLED"
    assert "frank" in " ".join(tree["verdict"]["reasons"])
    assert attempt_summary(tree) == [(1, "LEASE_EXPIRED", "lease_expired")]
    assert len(fleet.agent_pids()) == 1
    fleet.audit_ok()


@pytest.mark.parametrize("noun", ["run", "task"])
def test_cancelling_a_run_whose_worker_died_ends_it_at_once(fleet: Fleet, noun: str) -> None:
    run_id = _run_whose_worker_died(fleet)
    target = run_id if noun == "run" else fleet.tree(run_id)["taskId"]
    fleet.cli(noun, "cancel", target, "--by", "grace", "--reason", "stuck")

    tree = fleet.tree(run_id)  # no worker has run since
    assert tree["status"] == "CANCELLED"
    assert tree["verdict"]["status"] == "CANCELLED"
    assert attempt_summary(tree) == [(1, "LEASE_EXPIRED", "lease_expired")]
    fleet.audit_ok()
