"""Workers that die, freeze or are stopped mid-run: the run is reclaimed, never lost or doubled.

Real `agentctl worker` processes with 2-second leases on one state home; the agent's long step
is a script that hangs on its first call only, so attempt 1 is caught in the middle of its work
and attempt 2 goes straight through.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.e2e.workers_support import (
    Fleet,
    Worker,
    attempt_summary,
    clean_stderr,
    event_types,
    process_gone,
    wait_until,
)

TTL = ("--lease-ttl", "2")



def _hung_run(fleet: Fleet, *, first: float = 30) -> str:
    return fleet.queue(fleet.submit(), fleet.hanging_plan(first=first, later=0))


@pytest.mark.parametrize("holder", ["worker", "inline-run-start"])
def test_a_run_whose_worker_was_killed_is_reclaimed_after_the_lease_expires(
        fleet: Fleet, holder: str) -> None:
    """kill -9 of the process executing the run (`agentctl worker`, or `run start` executing
    it inline) while its agent works: after the 2-second lease another worker takes over."""
    task_id = fleet.submit()
    if holder == "worker":
        run_id = fleet.queue(task_id, fleet.hanging_plan(first=30, later=0))
        doomed = fleet.start_worker(*TTL, "--poll", "0.2")
        doomed_id = doomed.worker_id()
        agent_pid = fleet.wait_for_agent(run_id=run_id)
    else:  # the inline run takes its lease TTL from the config: 2 s
        doomed = fleet.start_process("run", "start", task_id, "--agent",
                                     fleet.hanging_plan(first=30, later=0))
        wait_until(lambda: fleet.query("SELECT run_id FROM run"), timeout=30,
                   what="the inline run to be created")
        run_id = str(fleet.query("SELECT run_id FROM run")[0][0])
        agent_pid = fleet.wait_for_agent(run_id=run_id)
        doomed_id = str(fleet.query("SELECT worker_id FROM attempt")[0][0])

    doomed.signal_group(signal.SIGKILL)
    doomed.wait(timeout=10)
    # The agent's command runs in a session of its own, outside the worker's group: a machine
    # crash would take it down too, so the test does.
    os.kill(agent_pid, signal.SIGKILL)
    wait_until(lambda: process_gone(agent_pid), timeout=10, what="the orphaned agent to die")

    rescuer = fleet.cli("worker", "--once", *TTL, "--poll", "0.1")
    clean_stderr(rescuer.stderr)

    tree, events = fleet.tree(run_id), fleet.events(run_id)
    assert tree["status"] == "COMPLETED"
    assert tree["verdict"]["status"] == "SUCCESS"
    assert attempt_summary(tree) == [(1, "LEASE_EXPIRED", "lease_expired"),
                                     (2, "COMPLETED", None)]
    first, second = tree["attempts"]
    assert first["workerId"] == doomed_id
    assert second["workerId"] not in (None, doomed_id)
    assert f"worker {second['workerId']} started" in rescuer.stderr
    assert first["leaseId"] and second["leaseId"] and first["leaseId"] != second["leaseId"]
    assert first["endReason"] == "worker lease expired on attempt 1"
    assert first["endedAt"] <= second["startedAt"]

    types = event_types(events)
    leases = [e for e in events if e["type"] == "LeaseAcquired"]
    assert [e["payload"]["attemptNumber"] for e in leases] == [1, 2]
    assert [e["payload"]["leaseId"] for e in leases] == [first["leaseId"], second["leaseId"]]
    assert [e["payload"]["workerId"] for e in leases] == [doomed_id, second["workerId"]]
    expired = [e for e in events if e["type"] == "LeaseExpired"]
    assert [e["attemptId"] for e in expired] == [first["attemptId"]]
    positions = {id(e): index for index, e in enumerate(events)}
    assert positions[id(leases[0])] < positions[id(expired[0])] < positions[id(leases[1])]
    assert types.count("VerdictDecided") == 1
    assert all(e["attemptId"] == second["attemptId"] for e in events
               if e["type"] == "VerdictDecided")
    fleet.audit_ok()


def test_a_foreground_run_killed_with_minus_9_is_requeued_and_run_show_says_it_needs_a_worker(
        fleet: Fleet) -> None:
    """kill -9 of `run start` executing its run: no worker is around, so the `run show` that
    finds the lease run out requeues the run and says, once, that only a worker takes it up."""
    task_id = fleet.submit()
    doomed = fleet.start_process("run", "start", task_id, "--agent",
                                 fleet.hanging_plan(first=30, later=0))
    wait_until(lambda: fleet.query("SELECT run_id FROM run"), timeout=30,
               what="the inline run to be created")
    run_id = str(fleet.query("SELECT run_id FROM run")[0][0])
    agent_pid = fleet.wait_for_agent(run_id=run_id)
    doomed.signal_group(signal.SIGKILL)
    doomed.wait(timeout=10)
    os.kill(agent_pid, signal.SIGKILL)

    line = f"run {run_id} was requeued: it needs a worker (agentctl worker --once)"
    # each `run show` before the 2-second lease runs out finds nothing to say
    shown = wait_until(lambda: (result := fleet.cli("run", "show", run_id)).stderr
                       and result, timeout=30, interval=0.2, what="run show to requeue the run")
    assert shown.stderr.splitlines() == [line], shown.stderr
    assert fleet.status(run_id) == "QUEUED"
    assert "QUEUED" in shown.stdout
    again = fleet.cli("run", "list")
    assert line not in again.stderr  # said once, by the command that requeued it


def test_a_run_whose_worker_was_killed_on_its_last_attempt_ends_failed_infrastructure(
        fleet: Fleet) -> None:
    fleet.configure(max_attempts=1)
    run_id = _hung_run(fleet)
    doomed = fleet.start_worker(*TTL, "--poll", "0.2")
    agent_pid = fleet.wait_for_agent(run_id=run_id)
    doomed.signal_group(signal.SIGKILL)
    doomed.wait(timeout=10)
    os.kill(agent_pid, signal.SIGKILL)

    reaper = fleet.cli("worker", "--once", *TTL, "--poll", "0.1")

    assert "done: 0 attempt(s)" in reaper.stderr
    tree, events = fleet.tree(run_id), fleet.events(run_id)
    assert tree["status"] == "FAILED"
    assert tree["verdict"]["status"] == "FAILED_INFRASTRUCTURE"
    assert "worker lease expired on attempt 1" in " ".join(tree["verdict"]["reasons"])
    assert attempt_summary(tree) == [(1, "LEASE_EXPIRED", "lease_expired")]
    types = event_types(events)
    assert types.count("LeaseAcquired") == 1
    assert types[-3:] == ["LeaseExpired", "VerdictDecided", "RunCompleted"]
    fleet.audit_ok()


@pytest.mark.parametrize("first_sleep", [30, 2.5], ids=["agent-still-running",
                                                        "agent-finished-meanwhile"])
def test_a_frozen_worker_that_resumes_after_its_lease_was_taken_over_writes_nothing(
        fleet: Fleet, first_sleep: float) -> None:
    """SIGSTOP the worker while its agent works; a second worker takes the run over and
    finishes it; SIGCONT the first. Whether its agent is still running (the heartbeat finds the
    lease gone) or finished while it was frozen (its next write meets the fence), the stale
    attempt changes nothing: not the verdict, not one row, not one event."""
    run_id = _hung_run(fleet, first=first_sleep)
    frozen = fleet.start_worker(*TTL, "--poll", "0.2")
    frozen_id = frozen.worker_id()
    agent_pid = fleet.wait_for_agent(run_id=run_id)
    fleet.freeze(frozen)

    rescuer = fleet.cli("worker", "--once", *TTL, "--poll", "0.1")
    clean_stderr(rescuer.stderr)
    if first_sleep < 30:  # the stale agent has exited; its frozen worker has not noticed yet
        wait_until(lambda: process_gone(agent_pid), timeout=30, what="the stale agent to end")
    before_tree, before_events = fleet.tree(run_id), fleet.events(run_id)
    assert before_tree["verdict"]["status"] == "SUCCESS"
    assert attempt_summary(before_tree) == [(1, "LEASE_EXPIRED", "lease_expired"),
                                            (2, "COMPLETED", None)]
    before_rows = _row_counts(fleet)

    idles = frozen.idles()
    frozen.signal_group(signal.SIGCONT)
    # It notices the lost lease within a heartbeat (~0.7 s), kills its agent (a second of grace)
    # and goes idle: once it says so, whatever it would wrongly do is done.
    wait_until(lambda: process_gone(agent_pid), timeout=10, what="the stale agent to be killed")
    wait_until(lambda: not fleet.workspaces(), timeout=10,
               what="the stale attempt's workspace to be removed")
    frozen.wait_idle(more_than=idles, timeout=30)

    after_tree, after_events = fleet.tree(run_id), fleet.events(run_id)
    assert after_tree == before_tree
    assert after_events == before_events
    assert _row_counts(fleet) == before_rows
    assert before_tree["attempts"][0]["workerId"] == frozen_id
    assert frozen.process.poll() is None  # idle, waiting for work: a lost lease is no crash
    frozen.process.send_signal(signal.SIGTERM)
    assert frozen.wait(timeout=15) == 130
    clean_stderr(frozen.stderr())
    fleet.audit_ok()


def _stopped_with_sigterm(fleet: Fleet, phase: str = "agent") -> tuple[str, Worker, int]:
    """A run whose worker got SIGTERM while the agent's long step (or, with phase "verifier",
    the verification command) ran its first, hanging call: (run, worker, hanging pid)."""
    if phase == "agent":
        run_id = _hung_run(fleet)
    else:
        fleet.configure(max_attempts=2, verify=[fleet.hanging_command(first=30, later=0)])
        run_id = fleet.queue(fleet.submit(), fleet.writing_plan())
    stopped = fleet.start_worker(*TTL, "--poll", "0.2")
    hanging_pid = fleet.wait_for_agent(
        run_id=run_id, status="RUNNING_AGENT" if phase == "agent" else "VERIFYING")
    stopped.process.send_signal(signal.SIGTERM)
    assert stopped.wait(timeout=15) == 130
    return run_id, stopped, hanging_pid


@pytest.mark.parametrize("phase", ["agent", "verifier"])
def test_a_worker_stopped_with_sigterm_hands_its_run_back_and_a_later_worker_completes_it(
        fleet: Fleet, phase: str) -> None:
    run_id, stopped, agent_pid = _stopped_with_sigterm(fleet, phase)
    assert "stopped" in stopped.stderr()
    clean_stderr(stopped.stderr())
    assert process_gone(agent_pid)
    assert fleet.workspaces() == []

    handed_back, events = fleet.tree(run_id), fleet.events(run_id)
    assert handed_back["status"] == "QUEUED"
    assert handed_back["verdict"] is None
    assert attempt_summary(handed_back) == [(1, "FAILED", "worker_stopped")]
    assert handed_back["attempts"][0]["endedAt"] is not None
    types = event_types(events)
    assert types[-2:] == ["AttemptFailed", "RunQueued"]
    assert events[-2]["payload"]["failureCode"] == "worker_stopped"
    assert "VerdictDecided" not in types

    later = fleet.cli("worker", "--once", *TTL, "--poll", "0.1")
    clean_stderr(later.stderr)
    done = fleet.tree(run_id)
    assert done["status"] == "COMPLETED"
    assert done["verdict"]["status"] == "SUCCESS"
    assert attempt_summary(done) == [(1, "FAILED", "worker_stopped"), (2, "COMPLETED", None)]
    fleet.audit_ok()


def test_a_draining_worker_waits_for_the_run_another_worker_holds_and_takes_it_when_handed_back(
        fleet: Fleet) -> None:
    run_id = _hung_run(fleet)
    holder = fleet.start_worker(*TTL, "--poll", "0.2")
    holder_id = holder.worker_id()
    fleet.wait_for_agent(run_id=run_id)
    drainer = fleet.start_worker("--once", *TTL, "--poll", "0.1")
    drainer_id = drainer.worker_id()
    drainer.wait_idle(timeout=30)  # nothing queued, but a run is held: it waits, not exits

    holder.process.send_signal(signal.SIGTERM)
    assert holder.wait(timeout=15) == 130
    assert drainer.wait(timeout=60) == 0
    assert drainer.attempts_done() == 1
    clean_stderr(drainer.stderr())
    tree = fleet.tree(run_id)
    assert attempt_summary(tree) == [(1, "FAILED", "worker_stopped"), (2, "COMPLETED", None)]
    assert [a["workerId"] for a in tree["attempts"]] == [holder_id, drainer_id]


def test_a_worker_stopped_with_sigterm_closes_the_step_it_was_in(fleet: Fleet) -> None:
    run_id, _, _ = _stopped_with_sigterm(fleet)
    (attempt,) = fleet.tree(run_id)["attempts"]
    assert attempt["status"] == "FAILED"
    open_steps = [(step["type"], step["title"]) for step in attempt["steps"]
                  if step["status"] == "STARTED" or step["endedAt"] is None]
    assert open_steps == []


@pytest.mark.parametrize("ttl", [
    "2",
    "0.5",
])
def test_a_busy_worker_keeps_its_lease_past_the_ttl_by_heartbeating(
        fleet: Fleet, ttl: str) -> None:
    run_id = _hung_run(fleet)
    worker = fleet.start_worker("--lease-ttl", ttl, "--poll", "0.2")
    agent_pid = fleet.wait_for_agent(run_id=run_id)
    time.sleep(max(1.5, 1.5 * float(ttl)))  # past the TTL: only heartbeats keep the lease

    attempts = fleet.query(
        "SELECT attempt_number, status, started_at, last_heartbeat_at, lease_expires_at "
        "FROM attempt WHERE run_id = ?", run_id)
    assert [(number, status) for number, status, *_ in attempts] == [(1, "ACTIVE")]
    assert fleet.status(run_id) == "RUNNING_AGENT"
    _, _, started, beat, expires = attempts[0]
    assert beat > started
    assert expires > beat
    assert not process_gone(agent_pid)

    worker.process.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=15) == 130
    clean_stderr(worker.stderr())


def test_a_frozen_worker_with_no_rival_takes_its_run_up_again_as_a_fresh_attempt(
        fleet: Fleet) -> None:
    """Frozen past its lease with no other worker around, a worker that resumes finds its
    lease gone, stops its stale attempt, reaps it and executes the run as attempt 2."""
    run_id = _hung_run(fleet)
    worker = fleet.start_worker(*TTL, "--poll", "0.2", "--max-runs", "2")
    worker_id = worker.worker_id()
    agent_pid = fleet.wait_for_agent(run_id=run_id)
    fleet.freeze(worker)
    time.sleep(3.5)
    worker.signal_group(signal.SIGCONT)

    assert worker.wait(timeout=30) == 0
    clean_stderr(worker.stderr())
    assert process_gone(agent_pid)
    tree = fleet.tree(run_id)
    assert tree["verdict"]["status"] == "SUCCESS"
    assert attempt_summary(tree) == [(1, "LEASE_EXPIRED", "lease_expired"),
                                     (2, "COMPLETED", None)]
    assert {a["workerId"] for a in tree["attempts"]} == {worker_id}
    assert tree["attempts"][0]["leaseId"] != tree["attempts"][1]["leaseId"]
    assert fleet.workspaces() == []
    fleet.audit_ok()


def _row_counts(fleet: Fleet) -> dict[str, int]:
    tables = [row[0] for row in fleet.query(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {table: int(fleet.query(f'SELECT count(*) FROM "{table}"')[0][0])
            for table in tables}
