"""`task submit --run` asks git for the base commit once: the commit submit resolved is the one
the run binds, while a run created later resolves the ref again."""

from __future__ import annotations

from pathlib import Path

from agentctl import config as configuration
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_and_resolve
from agentctl.services.lifecycle.runs import create_run
from agentctl.testing import InMemoryStorage
from tests.conftest import git, make_repo


def test_the_commit_submit_resolved_is_the_one_a_run_started_with_it_binds(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", {"calc.py": "x = 1\n"})
    first = git(repo, "rev-parse", "HEAD")
    storage, settings = InMemoryStorage(), configuration.defaults()
    submitted = submit_and_resolve(storage, settings, TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction="fix the thing",
        verification_commands=("true",)), cwd=tmp_path)
    assert submitted.base_commit == first
    (repo / "calc.py").write_text("x = 2\n")
    git(repo, "commit", "-q", "-am", "the branch moves on")
    agent = parse_agent_spec("noop", tmp_path)

    bound = create_run(storage, settings, submitted.task.task_id, agent=agent,
                       base_commit=submitted.base_commit)
    later = create_run(storage, settings, submitted.task.task_id, agent=agent)

    assert bound.base_commit == first
    assert later.base_commit == git(repo, "rev-parse", "HEAD") != first


def test_a_url_tasks_base_is_resolved_when_its_run_starts_not_at_submit(tmp_path: Path) -> None:
    submitted = submit_and_resolve(InMemoryStorage(), configuration.defaults(), TaskRequest(
        repository="https://git.example.invalid/calc.git", base_ref="main", task_type="bug_fix",
        instruction="fix the thing",
        verification_commands=("true",)), cwd=tmp_path)
    assert submitted.base_commit is None
