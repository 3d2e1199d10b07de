"""A worker says when it runs out of work, once for each stretch of nothing to do: the event the
worker tests wait for instead of a guess of how long the work takes. The worker loop on the
in-memory store; each test ends the loop from its wait (`sleep`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.config import defaults
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_task
from agentctl.services.attempts.pipeline import RunOptions
from agentctl.services.lifecycle.queue import Queue
from agentctl.services.lifecycle.runs import create_run, lease_run
from agentctl.services.lifecycle.worker import work
from agentctl.testing import InMemoryStorage


class Stop(Exception):
    """Ends the worker loop from inside its wait."""


class Timeline:
    """What the worker did, in order: each `idle` it said and each wait; the loop ends at the
    wait numbered `waits`."""

    def __init__(self, waits: int) -> None:
        self.events: list[str] = []
        self.waits = waits

    def idle(self) -> None:
        self.events.append("idle")

    def sleep(self, _seconds: float) -> None:
        self.events.append("wait")
        if self.events.count("wait") == self.waits:
            raise Stop


def test_a_worker_with_nothing_to_lease_says_it_is_idle_once_before_its_first_wait() -> None:
    timeline = Timeline(waits=3)
    with pytest.raises(Stop):
        work(Queue(InMemoryStorage()), worker_id="w", ttl_seconds=10, poll_seconds=0.1,
             options=RunOptions(), on_idle=timeline.idle, sleep=timeline.sleep)
    assert timeline.events == ["idle", "wait", "wait", "wait"]


def test_a_draining_worker_with_nothing_queued_exits_without_going_idle() -> None:
    timeline = Timeline(waits=1)
    assert work(Queue(InMemoryStorage()), worker_id="w", ttl_seconds=10, poll_seconds=0.1,
                options=RunOptions(), once=True, on_idle=timeline.idle,
                sleep=timeline.sleep) == 0
    assert timeline.events == []


def test_a_draining_worker_goes_idle_while_another_worker_holds_a_run(
        repo: Path, tmp_path: Path) -> None:
    storage = InMemoryStorage()
    task = submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction="fix the greeting"), cwd=tmp_path)
    run = create_run(storage, defaults(), task.task_id, agent=parse_agent_spec("noop", tmp_path))
    assert lease_run(storage, worker_id="holder", ttl_seconds=60, run_id=run.run_id) is not None
    timeline = Timeline(waits=2)
    with pytest.raises(Stop):  # it would have returned had it not waited for the held run
        work(Queue(storage), worker_id="drainer", ttl_seconds=10, poll_seconds=0.1,
             options=RunOptions(), once=True, on_idle=timeline.idle, sleep=timeline.sleep)
    assert timeline.events == ["idle", "wait", "wait"]
