"""A bug of agentctl's (a KeyError in the judge) ends its run once, in its own words; only a
failure of the machine (the disk, git, the store) earns a fresh attempt."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from agentctl.config import load
from agentctl.domain.ending import InfraFailed
from agentctl.domain.enums import AttemptStatus, RunStatus, VerdictStatus
from agentctl.domain.errors import InfrastructureFailure
from agentctl.domain.run import Run
from agentctl.domain.verdict import infrastructure_failed
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_task
from agentctl.services.attempts.bugs import bug_text, is_bug
from agentctl.services.lifecycle.ledger import Ledger
from agentctl.services.lifecycle.runs import create_run, lease_run
from agentctl.services.unit_of_work import Storage


@pytest.fixture
def queued(storage: Storage, repo: Path, tmp_path: Path) -> Run:
    settings = tmp_path / "agentctl.toml"
    settings.write_text("[budget]\nmax_attempts = 3\nbackoff_initial_seconds = 0\n")
    config = load(settings)
    task = submit_task(storage, config, TaskRequest(repository=str(repo), task_type="bug_fix",
                                                  instruction="fix the greeting"), cwd=tmp_path)
    return create_run(storage, config, task.task_id, agent=parse_agent_spec("noop", tmp_path))


def _end(storage: Storage, run: Run, end: InfraFailed) -> Run:
    lease = lease_run(storage, worker_id="worker-a", ttl_seconds=60, run_id=run.run_id)
    assert lease is not None
    ledger = Ledger(storage, lease, spec_digest=run.spec_digest)
    ledger.activate("/nonexistent/attempt")
    ledger.end(end)
    with storage.unit_of_work() as uow:
        return uow.runs.get(run.run_id)


def test_a_bug_ends_the_run_on_its_first_attempt_with_its_own_words(
        storage: Storage, queued: Run) -> None:
    reason = bug_text(KeyError("checks"), "the judge phase")
    final = infrastructure_failed(reason, queued.execution_spec.autonomy_level)
    run = _end(storage, queued, InfraFailed(code="agentctl_bug", reason=reason, final=final,
                                            retry=False))
    assert run.status is not RunStatus.QUEUED and run.completed_at is not None
    with storage.unit_of_work() as uow:
        verdicts = list(uow.verdicts.find(run_id=queued.run_id))
        attempts = list(uow.attempts.find(run_id=queued.run_id))
    assert [v.status for v in verdicts] == [VerdictStatus.FAILED_INFRASTRUCTURE]
    assert verdicts[0].reasons[0].startswith("agentctl bug: KeyError: 'checks' in the judge phase")
    assert [(a.status, a.failure_code) for a in attempts] == [(AttemptStatus.FAILED,
                                                               "agentctl_bug")]


def test_a_machine_failure_is_still_retried_while_attempts_remain(
        storage: Storage, queued: Run) -> None:
    run = _end(storage, queued, InfraFailed(code="verify_failed", reason="verify failed: disk"))
    assert run.status is RunStatus.QUEUED


@pytest.mark.parametrize("error", [KeyError("x"), TypeError("len() of None"), AttributeError("y"),
                                   ValueError("z"), ZeroDivisionError()])
def test_programming_errors_are_bugs(error: Exception) -> None:
    assert is_bug(error)


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"),
                                   InfrastructureFailure("clone failed"),
                                   sqlite3.OperationalError("database is locked"),
                                   subprocess.TimeoutExpired(["git"], 5), MemoryError()])
def test_failures_of_the_machine_are_not_bugs(error: Exception) -> None:
    assert not is_bug(error)


def test_a_git_failure_is_not_a_bug() -> None:
    import git

    assert not is_bug(git.GitCommandError(["git", "fetch"], 128))
