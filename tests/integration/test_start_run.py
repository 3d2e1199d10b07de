"""`start_run(StartRun(...))`: the one use case behind `run start` and `task submit --run`
holds the sandbox refusal and builds the run's options (issue 22). Real SQLite store, real git
repository, the machine's bubblewrap."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl import config
from agentctl.domain.agent import AgentKind, AgentSpec
from agentctl.domain.enums import RunStatus
from agentctl.domain.errors import BadInput
from agentctl.domain.sandbox import SandboxMode
from agentctl.execution.sandboxing import bubblewrap
from agentctl.home import resolve_home
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.submit_and_run import SubmitAndRun, submit_and_run
from agentctl.services.actions.tasks import submit_task
from agentctl.services.lifecycle.start import RunChoices, StartRun, run_config, start_run
from agentctl.store.storage import Store
from tests.e2e.conftest import db_state

NOOP = AgentSpec(AgentKind.NOOP)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(resolve_home(str(tmp_path / "home")))


@pytest.fixture
def task_id(store: Store, repo: Path, tmp_path: Path) -> str:
    request = TaskRequest(repository=str(repo), task_type="custom", instruction="nothing")
    return submit_task(store, config.defaults(), request, cwd=tmp_path).task_id


@pytest.fixture
def no_bubblewrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """This process finds no bubblewrap (the check is cached per process: cleared around)."""
    monkeypatch.setenv("AGENTCTL_BWRAP", str(tmp_path / "no-such-bwrap"))
    bubblewrap.find_bubblewrap.cache_clear()
    bubblewrap.check.cache_clear()
    yield
    bubblewrap.find_bubblewrap.cache_clear()
    bubblewrap.check.cache_clear()


def test_a_detached_start_queues_the_run_under_the_chosen_sandbox(store: Store,
                                                                   task_id: str) -> None:
    run = start_run(store, config.defaults(), StartRun(
        task=task_id[:12], how=RunChoices(agent=NOOP, detach=True, no_sandbox=True))).run
    assert run.status is RunStatus.QUEUED and run.task_id == task_id
    assert run.execution_spec.sandbox.mode is SandboxMode.OFF


@pytest.mark.usefixtures("no_bubblewrap")
def test_a_sandbox_that_cannot_start_refuses_the_run_and_stores_none(store: Store,
                                                                     task_id: str) -> None:
    before = db_state(store.home.root)
    with pytest.raises(BadInput, match="bubblewrap"):
        start_run(store, config.defaults(),
                  StartRun(task=task_id, how=RunChoices(agent=NOOP, detach=True)))
    assert db_state(store.home.root) == before


@pytest.mark.usefixtures("no_bubblewrap")
def test_no_sandbox_is_not_refused_and_turns_the_sandbox_off() -> None:
    with pytest.raises(BadInput):
        run_config(config.defaults())
    assert run_config(config.defaults(), no_sandbox=True).sandbox.mode is SandboxMode.OFF


def test_an_inline_start_executes_the_run_to_its_end(store: Store, task_id: str) -> None:
    said: list[str] = []
    run = start_run(store, config.defaults(), StartRun(task=task_id, how=RunChoices(
        agent=NOOP, state_home=store.home.root, progress=said.append))).run
    assert run.status in (RunStatus.COMPLETED, RunStatus.FAILED), run.status
    assert said  # the status line was told what the run is doing


class Watcher:
    """The person's terminal, as the run sees it through its observer port."""

    def __init__(self) -> None:
        self.notices: list[str] = []
        self.attempts: list[int] = []

    def attempt(self, number: int) -> None:
        self.attempts.append(number)

    def step_done(self, done: object) -> None:
        pass

    def notice(self, text: str) -> None:
        self.notices.append(text)


def test_submit_and_run_is_one_call_that_warns_of_uncommitted_changes_first(
        store: Store, repo: Path, tmp_path: Path) -> None:
    (repo / "README.md").write_text("changed, not committed\n")
    watcher = Watcher()
    request = TaskRequest(repository=str(repo), task_type="custom", instruction="nothing")
    submitted = submit_and_run(store, config.defaults(), SubmitAndRun(
        request=request, cwd=tmp_path, run=RunChoices(
            agent=NOOP, state_home=store.home.root, observer=watcher)))
    assert submitted.run is not None
    assert submitted.run.run.task_id == submitted.task.task_id
    assert submitted.run.run.status in (RunStatus.COMPLETED, RunStatus.FAILED)
    assert len(watcher.notices) == 1 and "uncommitted changes (1 file)" in watcher.notices[0]
    assert watcher.attempts == [1]


def test_submit_without_a_run_stores_the_task_and_starts_nothing(store: Store, repo: Path,
                                                                 tmp_path: Path) -> None:
    request = TaskRequest(repository=str(repo), task_type="custom", instruction="nothing")
    submitted = submit_and_run(store, config.defaults(), SubmitAndRun(request=request,
                                                                      cwd=tmp_path))
    assert submitted.run is None
    with store.reads() as reads:
        assert reads.task(submitted.task.task_id).status.value == "READY_FOR_RUN"
    with store.unit_of_work() as uow:
        assert uow.runs.find(task_id=submitted.task.task_id) == []


@pytest.mark.usefixtures("no_bubblewrap")
def test_submit_and_run_on_a_machine_that_cannot_sandbox_stores_nothing(
        store: Store, repo: Path, tmp_path: Path) -> None:
    before = db_state(store.home.root)
    request = TaskRequest(repository=str(repo), task_type="custom", instruction="nothing")
    with pytest.raises(BadInput, match="bubblewrap"):
        submit_and_run(store, config.defaults(), SubmitAndRun(
            request=request, cwd=tmp_path, run=RunChoices(agent=NOOP)))
    assert db_state(store.home.root) == before


@pytest.mark.usefixtures("no_bubblewrap")
@pytest.mark.parametrize("allowed", [(), (".agentctl.toml",)], ids=["accepted", "denied"])
def test_a_submit_whose_sandbox_check_ran_beside_the_resolution_still_stores_nothing(
        store: Store, repo: Path, tmp_path: Path, allowed: tuple[str, ...]) -> None:
    """The check starts before the repository is resolved and is waited for before the base
    is checked out into the tree cache or anything is stored, policy's denial or not."""
    before = db_state(store.home.root)
    request = TaskRequest(repository=str(repo), task_type="custom", instruction="nothing",
                          allowed_paths=allowed)
    with pytest.raises(BadInput, match="the sandbox cannot start: bubblewrap"):
        submit_and_run(store, config.defaults(), SubmitAndRun(
            request=request, cwd=tmp_path, run=RunChoices(agent=NOOP,
                                                          state_home=store.home.root)))
    assert db_state(store.home.root) == before
    assert not (store.home.root / "trees").exists()
