"""Use cases that declare a narrow port (the few members of the storage port they use) run on
each store seen through that port alone: a use case that reached for more would fail here, on
the fake as on SQLite and PostgreSQL, and not only under mypy."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agentctl.config import defaults
from agentctl.domain.enums import ApprovalDecision, EventType, MessageRole, RunStatus, TaskStatus
from agentctl.domain.errors import NotFound
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.execution.workspaces.discard import ATTEMPT_DIR_PREFIX
from agentctl.services.actions.approvals import record_approval
from agentctl.services.actions.pr_status import refresh_pull_request
from agentctl.services.actions.replay import cassette_of
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.sessions import add_message, start_session
from agentctl.services.actions.tasks import cancel_task, submit_task
from agentctl.services.lifecycle.runs import cancel_run, create_run, heartbeat, lease_run
from agentctl.services.lifecycle.sweep import sweep_attempt_directories
from agentctl.services.queries.trace_export import record_unsent
from agentctl.services.unit_of_work import Storage


class Only:
    """`target` with only `names` reachable: any other member is an AttributeError that names
    it. `work` narrows what its units of work give the same way, `reading` its reads."""

    def __init__(self, target: Any, names: set[str], *, work: set[str] = frozenset(),
                 reading: set[str] = frozenset()) -> None:
        self._target, self._names, self._work, self._reading = target, names, work, reading

    def __getattr__(self, name: str) -> object:
        if name not in self._names:
            raise AttributeError(f"{name!r} is outside the use case's port")
        return getattr(self._target, name)

    @contextmanager
    def unit_of_work(self) -> Iterator[Only]:
        if "unit_of_work" not in self._names:
            raise AttributeError("'unit_of_work' is outside the use case's port")
        with self._target.unit_of_work() as uow:
            yield Only(uow, self._work)

    @contextmanager
    def reads(self) -> Iterator[Only]:
        if "reads" not in self._names:
            raise AttributeError("'reads' is outside the use case's port")
        with self._target.reads() as reads:
            yield Only(reads, self._reading)


def test_a_session_and_its_messages_need_only_sessions_messages_and_events(
        storage: Storage) -> None:
    port = Only(storage, {"unit_of_work", "resolve"}, work={"sessions", "messages", "events"})
    session = start_session(port, title="the flaky test", owner="ana")
    message = add_message(port, session.session_id[:12], role="user",
                          content="it fails one run in ten")
    with storage.unit_of_work() as uow:
        assert uow.messages.find(session_id=session.session_id) == [message]
        assert message.role is MessageRole.USER


def test_an_approval_needs_only_the_run_its_verdict_and_its_approvals(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    task = submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction="fix the greeting"), cwd=tmp_path)
    run = create_run(storage, defaults(), task.task_id,
                     agent=parse_agent_spec("noop", tmp_path))
    port = Only(storage, {"unit_of_work", "resolve"},
                work={"runs", "verdicts", "approvals", "events"})
    with pytest.raises(NotFound, match="has no verdict yet"):
        record_approval(port, run.run_id, decision=ApprovalDecision.APPROVED,
                        by="ana", reason="looks right")


def test_the_sweep_of_ended_attempts_needs_only_their_directories(
        storage: Storage, tmp_path: Path) -> None:
    port = Only(storage, {"reads"}, reading={"ended_attempt_directories"})
    stranger = tmp_path / f"{ATTEMPT_DIR_PREFIX}not-ours"
    stranger.mkdir()
    assert sweep_attempt_directories(port, tmp_path) == 0
    assert stranger.is_dir()  # a directory no attempt recorded is never removed


def test_a_replays_cassette_needs_only_the_recorded_run(storage: Storage, repo: Path,
                                                      tmp_path: Path) -> None:
    task = submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction="fix the greeting"), cwd=tmp_path)
    run = create_run(storage, defaults(), task.task_id,
                     agent=parse_agent_spec("noop", tmp_path))
    cassette = cassette_of(Only(storage, {"reads"}, reading={"record"}), run.run_id,
                           lambda artifact: b"")
    assert cassette.recordings == []  # a run that made no model exchange


def test_a_heartbeat_needs_only_the_lease_and_the_runs_flags(storage: Storage, repo: Path,
                                                           tmp_path: Path) -> None:
    task = submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction="fix the greeting"), cwd=tmp_path)
    run = create_run(storage, defaults(), task.task_id,
                     agent=parse_agent_spec("noop", tmp_path))
    lease = lease_run(storage, worker_id="w", ttl_seconds=10, run_id=run.run_id)
    assert lease is not None
    port = Only(storage, {"unit_of_work"}, work={"runs", "extend_lease"})
    assert heartbeat(port, lease).cancel is None
    cancel_run(storage, run.run_id, by="ana", reason="not needed")
    assert heartbeat(port, lease).cancel == ("ana", "not needed")


def test_a_trace_left_unsent_needs_only_the_runs_records_and_the_event_log(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    task = submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction="fix the greeting"), cwd=tmp_path)
    run = create_run(storage, defaults(), task.task_id,
                     agent=parse_agent_spec("noop", tmp_path))
    port = Only(storage, {"reads", "unit_of_work"}, work={"events"},
                reading={"snapshot", "run", "attempts", "steps", "tool_calls", "verdict"})
    record_unsent(port, run, "http://127.0.0.1:4318", "the collector was away")
    with storage.reads() as reads:
        [exported] = [event for event in reads.record(run.run_id).events
                      if event.type is EventType.TRACE_EXPORTED]
    assert exported.payload["error"] == "the collector was away"


def test_a_pull_requests_status_needs_only_the_runs_pull_requests(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    task = submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction="fix the greeting"), cwd=tmp_path)
    run = create_run(storage, defaults(), task.task_id,
                     agent=parse_agent_spec("noop", tmp_path))
    port = Only(storage, {"reads", "unit_of_work"}, reading={"run", "pull_requests"},
                work={"pull_requests", "events"})
    with pytest.raises(NotFound, match="has no pull request"):
        refresh_pull_request(port, run.run_id)


ENDING = {"tasks", "runs", "attempts", "steps", "verdicts", "events", "unfinished_runs"}


def test_cancelling_a_run_or_a_task_needs_only_what_ending_a_run_touches(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    tasks = [submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction=f"fix the greeting {n}"),
        cwd=tmp_path) for n in range(2)]
    runs = [create_run(storage, defaults(), task.task_id,
                       agent=parse_agent_spec("noop", tmp_path)) for task in tasks]
    port = Only(storage, {"unit_of_work", "resolve"}, work=ENDING)
    assert cancel_run(port, runs[0].run_id, by="ana", reason="wrong repo").status \
        is RunStatus.CANCELLED
    assert cancel_task(port, tasks[1].task_id, by="ana", reason="not needed").status \
        is TaskStatus.CANCELLED
    with storage.reads() as reads:
        assert reads.run(runs[1].run_id).status is RunStatus.CANCELLED
