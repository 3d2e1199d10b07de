"""Use cases that declare a narrow port (the few members of the storage port they use) run on
each store seen through that port alone: a use case that reached for more would fail here, on
the fake as on SQLite and PostgreSQL, and not only under mypy."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentctl.config import defaults
from agentctl.domain.clock import utcnow
from agentctl.domain.ending import Completed
from agentctl.domain.enums import (
    ApprovalDecision,
    EventType,
    MessageRole,
    RunStatus,
    StepStatus,
    StepType,
    TaskStatus,
)
from agentctl.domain.errors import BadInput, NotFound, PolicyDenied
from agentctl.domain.run import Run
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.execution.workspaces.discard import ATTEMPT_DIR_PREFIX
from agentctl.services.actions.approvals import record_approval
from agentctl.services.actions.attest import attest_run
from agentctl.services.actions.pr_status import refresh_pull_request
from agentctl.services.actions.pull_requests import PrRequest, create_pull_request
from agentctl.services.actions.replay import cassette_of, queue_replay, replay_report
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.sessions import add_message, start_session
from agentctl.services.actions.submit_and_run import SubmitAndRun, submit_and_run
from agentctl.services.actions.tasks import cancel_task, submit_task
from agentctl.services.attempts.pipeline import RunOptions
from agentctl.services.lifecycle.ledger import Ledger
from agentctl.services.lifecycle.leftovers import notice_expired
from agentctl.services.lifecycle.queue import Queue
from agentctl.services.lifecycle.runs import (
    cancel_run,
    create_run,
    heartbeat,
    lease_run,
    reap_expired,
)
from agentctl.services.lifecycle.start import RunChoices, StartRun, start_run
from agentctl.services.lifecycle.sweep import sweep_attempt_directories, sweep_in_background
from agentctl.services.lifecycle.worker import create_and_run
from agentctl.services.ports import StepEnd
from agentctl.services.queries.trace_export import record_unsent
from agentctl.services.unit_of_work import Storage
from tests.contract.test_fencing import SUCCESS
from tests.support.calc import toml_plan


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


# The composite use cases' ports, as their Protocols list them (each a union of the ports of
# the use cases it calls).
NEW_RUN = {"tasks", "runs", "events", "task_status", "next_run_number", "wake_workers"}
RECLAIM = ENDING | {"expired_attempts", "wake_workers", "directories"}
CLAIM = RECLAIM | {"next_queued_run"}
LEDGER = ENDING | {"tool_calls", "artifacts", "patches", "verifications", "judgements", "fence",
                   "write_pending", "record_directory", "run_status", "set_run_status"}
QUEUE_WORK = CLAIM | {"extend_lease"} | LEDGER
QUEUE_READS = {"run", "cancel_request", "waiting", "record"}
QUEUE = {"unit_of_work", "reads", "blobs", "pending", "outage_errors", "outage_text"}
INLINE_WORK, INLINE_READS, INLINE = QUEUE_WORK | NEW_RUN, QUEUE_READS | {"task"}, QUEUE | {"resolve"}
START_READS = INLINE_READS | {"lease_due", "snapshot", "attempts", "steps", "tool_calls", "verdict"}
SUBMIT_WORK = {"sessions", "tasks", "events"}


def _task(storage: Storage, repo: Path, tmp_path: Path, instruction: str = "fix the greeting",
          ) -> str:
    return submit_task(storage, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction=instruction),
        cwd=tmp_path).task_id


def test_creating_leasing_and_reclaiming_a_run_need_only_their_claims(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    creating = Only(storage, {"unit_of_work", "reads", "resolve"}, work=NEW_RUN,
                    reading={"task"})
    run = create_run(creating, defaults(), _task(storage, repo, tmp_path)[:12],
                     agent=parse_agent_spec("noop", tmp_path))
    lease = lease_run(Only(storage, {"unit_of_work"}, work=CLAIM), worker_id="w",
                      ttl_seconds=10)
    assert lease is not None and lease.run_id == run.run_id

    def hours_later(hours: int) -> Callable[[], datetime]:
        return lambda: utcnow() + timedelta(hours=hours)  # past the lease, then the backoff

    noticing = Only(storage, {"reads", "unit_of_work", "outage_errors"}, work=RECLAIM,
                    reading={"lease_due"})
    assert [r.run_id for r in notice_expired(noticing, clock=hours_later(1))] == [run.run_id]
    again = lease_run(Only(storage, {"unit_of_work"}, work=CLAIM), worker_id="w",
                      ttl_seconds=10, run_id=run.run_id, clock=hours_later(2))
    assert again is not None and again.attempt_number == 2
    [reaped] = reap_expired(Only(storage, {"unit_of_work"}, work=RECLAIM), clock=hours_later(3))
    assert reaped.run_id == run.run_id


def test_an_attempts_ledger_needs_only_its_fenced_writes(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    run = create_run(storage, defaults(), _task(storage, repo, tmp_path),
                     agent=parse_agent_spec("noop", tmp_path))
    lease = lease_run(storage, worker_id="w", ttl_seconds=60, run_id=run.run_id)
    assert lease is not None
    ledger = Ledger(Only(storage, {"blobs", "pending", "unit_of_work"}, work=LEDGER), lease,
                    spec_digest=run.spec_digest)
    ledger.activate("/nonexistent/attempt")
    ledger.advance(RunStatus.RUNNING_AGENT, EventType.WORKSPACE_PREPARED)
    short = ledger.begin_step(StepType.LOAD_CONTEXT, "a short step", live=False)
    ledger.end_step(short, StepEnd())
    long = ledger.begin_step(StepType.RUN_VERIFIER, "a long step", live=True)
    ledger.end_step(long, StepEnd(status=StepStatus.FAILED, failure_code="x"))
    ledger.advance(RunStatus.VERIFYING, EventType.VERIFIER_STARTED)
    ledger.advance(RunStatus.JUDGING, EventType.VERIFIER_COMPLETED)
    ended = ledger.end(Completed(SUCCESS))
    assert ended is not None and ended.status is RunStatus.COMPLETED
    with storage.reads() as reads:
        assert [s.title for s in reads.steps(run.run_id)] == ["a short step", "a long step"]


def test_the_queue_needs_only_claims_heartbeats_its_ledger_and_a_few_reads(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    run = create_run(storage, defaults(), _task(storage, repo, tmp_path),
                     agent=parse_agent_spec("noop", tmp_path))
    queue = Queue(Only(storage, QUEUE, work=QUEUE_WORK, reading=QUEUE_READS))
    assert queue.waiting()
    queue.outage_errors()  # within the port (the fake has no outage to name)
    lease = queue.lease(worker_id="w", ttl_seconds=60)
    assert lease is not None and queue.heartbeat(lease).cancel is None
    assert queue.cancel_request(run.run_id) is None and queue.reap_expired() == []
    queue.ledger(lease, run.spec_digest).activate("/nonexistent/attempt")
    assert queue.run(run.run_id).status is RunStatus.PREPARING_WORKSPACE
    assert [a.attempt_number for a in queue.record(run.run_id).attempts] == [1]


def test_submitting_and_starting_a_queued_run_need_only_their_ports(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    how = RunChoices(agent=parse_agent_spec("noop", tmp_path), detach=True, no_sandbox=True)
    submitted = submit_and_run(
        Only(storage, INLINE, work=INLINE_WORK | SUBMIT_WORK, reading=START_READS), defaults(),
        SubmitAndRun(request=TaskRequest(repository=str(repo), task_type="bug_fix",
                                         instruction="fix the greeting"), cwd=tmp_path, run=how))
    assert submitted.run is not None and submitted.run.run.status is RunStatus.QUEUED
    started = start_run(Only(storage, INLINE, work=INLINE_WORK, reading=START_READS),
                        defaults(), StartRun(task=submitted.task.task_id, how=how))
    assert started.run.number == 2 and started.run.status is RunStatus.QUEUED


def test_a_run_executed_here_and_what_reads_it_after_need_only_their_ports(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    """One real run (a script agent's one edit, no checks) through `create_and_run`'s port;
    then its attestation, and the replay and `pr create` up to their refusal, having read what
    they read."""
    plan = tmp_path / "plan.toml"
    plan.write_text(toml_plan({"tool": "fs.write", "path": "src/app.py",
                               "content": "def greet(name):\n    return f'hi {name}'\n"}))
    run: Run = create_and_run(Only(storage, INLINE, work=INLINE_WORK, reading=INLINE_READS),
                              defaults(), _task(storage, repo, tmp_path),
                              agent=parse_agent_spec(f"script:{plan}", tmp_path), detach=False,
                              options=RunOptions())
    assert run.status is RunStatus.COMPLETED, run
    with pytest.raises(BadInput, match="only a claude, codex or gemini run"):
        queue_replay(Only(storage, {"reads", "unit_of_work"}, work=NEW_RUN,
                          reading={"run", "record", "task"}), run.run_id)
    with pytest.raises(BadInput, match="is not a replay"):
        replay_report(Only(storage, {"reads"}, reading={"run", "record"}), run.run_id,
                      read=lambda artifact: b"")
    attest = {"reads", "blobs", "audit", "checkpoint", "state_root"}
    attest_reads = {"run", "task", "verdict", "approvals", "artifacts", "patch", "verification",
                    "event_head", "artifacts_by_id"}
    bundle = attest_run(Only(storage, attest, reading=attest_reads), run.run_id)
    assert len(bundle.splitlines()) == 2  # the provenance and the run predicate (no checks)
    with pytest.raises(PolicyDenied, match="may not open a PR"):
        create_pull_request(
            Only(storage, attest | {"unit_of_work"}, work={"pull_requests", "artifacts", "events"},
                 reading=attest_reads | {"pull_requests", "attempts", "steps", "tool_calls"}),
            PrRequest(run=run.run_id, branch=None, remote=None, draft=False, by="ana"))


def test_the_sweep_in_the_background_needs_only_directories_and_outages(
        storage: Storage) -> None:
    heard: list[str] = []
    sweep_in_background(Only(storage, {"reads", "outage_errors", "outage_text"},
                             reading={"ended_attempt_directories"}), heard.append).join()
    assert heard == []  # nothing of this store's to remove, and no fault to report
