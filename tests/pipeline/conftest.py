"""The run pipeline in-process, on each implementation of the storage port.

Every test here runs three times: in memory (`agentctl.testing.InMemoryStorage`), on SQLite and
on PostgreSQL; the use cases are the same code on each. Everything else is real: git repositories
in temporary directories, the workspace clone, the guarded tools, agents, subprocesses, the
verifier and the judge. A test drives a `Harness`, which submits a task and runs it the way
`run start` does, and reads back the `RunRecord` (the same typed records from any store).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentctl import config as configuration
from agentctl.config import Config
from agentctl.domain.agent import AgentSpec
from agentctl.domain.run import Run
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.home import Home, resolve_home
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_task
from agentctl.services.attempts.pipeline import RunOptions
from agentctl.services.lifecycle.queue import Queue
from agentctl.services.lifecycle.runs import cancel_run, create_run
from agentctl.services.lifecycle.worker import run_inline
from agentctl.services.ports import RunQueue, RunRecord
from agentctl.services.unit_of_work import Storage
from agentctl.store.storage import Store
from agentctl.testing import InMemoryStorage
from tests.conftest import make_repo
from tests.support.calc import CALC
from tests.support.calc import UNITTEST as UNITTEST
from tests.support.calc import toml_plan as toml_plan


@dataclass
class Harness:
    """One store (memory or SQLite), a working folder for config and plans, and a repository."""

    kind: str
    root: Path
    storage: Storage
    queue: RunQueue
    store: Store | None  # the real store, when it is one
    repo: Path
    settings: Config = field(default_factory=configuration.defaults)
    progress: list[str] = field(default_factory=list)

    def configure(self, text: str) -> Config:
        path = self.root / ".agentctl.toml"
        path.write_text(text)
        self.settings = configuration.load(path)
        return self.settings

    def plan(self, *steps: Mapping[str, object], name: str = "plan.toml") -> AgentSpec:
        path = self.root / name
        path.write_text(toml_plan(*steps))
        return parse_agent_spec(f"script:{path}", self.root)

    def submit(self, agent: AgentSpec, *, task_type: str = "bug_fix",
               instruction: str = "fix the thing", verify: tuple[str, ...] = (UNITTEST,),
               autonomy: str | None = None, allowed: tuple[str, ...] = (),
               forbidden: tuple[str, ...] = (), must_pass: tuple[str, ...] = (),
               allow_removed_tests: bool = False, test_patch: str | None = None) -> Run:
        """A queued run of a new task, as `task submit` and `run start --detach` make it."""
        task = submit_task(self.storage, self.settings, TaskRequest(
            repository=str(self.repo), task_type=task_type, instruction=instruction,
            verification_commands=verify, autonomy_level=autonomy, allowed_paths=allowed,
            forbidden_paths=forbidden, must_pass=must_pass,
            allow_removed_tests=allow_removed_tests or None, test_patch=test_patch),
            cwd=self.root)
        return create_run(self.storage, self.settings, task.task_id, agent=agent)

    def execute(self, run: Run, **options: object) -> Run:
        """Run it here, attempt after attempt, as `run start` does (its trees views of a tree
        cache in the test's folder unless `tree_cache` says otherwise)."""
        options.setdefault("tree_cache", TreeCache(self.root / "trees", 2**30))
        settings = RunOptions(progress=self.progress.append, **options)  # type: ignore[arg-type]
        return run_inline(self.queue, run.run_id, ttl_seconds=self.settings.worker.lease_ttl_seconds,
                          options=settings)

    def run(self, agent: AgentSpec, **submit: object) -> RunRecord:
        return self.record(self.execute(self.submit(agent, **submit)))

    def record(self, run: Run) -> RunRecord:
        return self.queue.record(run.run_id)

    def cancel(self, run_id: str, *, by: str, reason: str) -> Run:
        """What `run cancel` does."""
        return cancel_run(self.storage, run_id, by=by, reason=reason)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    repo = make_repo(tmp_path / "calc", CALC)
    if request.param == "memory":
        memory = InMemoryStorage()
        yield Harness("memory", tmp_path, memory, Queue(memory), None, repo)
        return
    home = resolve_home(str(tmp_path / "home"))
    if request.param == "postgresql":
        home = Home(root=home.root, database_url=request.getfixturevalue("postgres").database())
    store = Store(home)
    yield Harness(request.param, tmp_path, store, Queue(store), store, repo)
