"""`task submit` (and `task submit --run`) as one use case: the request is stored as a task
under policy and, with a run chosen, the run starts on the commit the base ref named as it was
submitted.

As soon as the base ref is resolved (before the task is stored) the run's base starts checking
out into the tree cache and the checkout's uncommitted changes are looked at, so both run while
the task and the run are written. The check that the sandbox starts here (a bwrap) runs beside
the resolution and is waited for before anything is stored or checked out.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentctl.config import Config
from agentctl.domain.enums import TaskStatus
from agentctl.domain.task import Task
from agentctl.execution.workspaces.cache_fill import Prefetch
from agentctl.execution.workspaces.checkout_changes import CheckoutChanges
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import SubmitStore, SubmitWork, submit_and_resolve
from agentctl.services.lifecycle.start import (
    RunChoices,
    StartedRun,
    StartRun,
    StartStore,
    check_sandbox_beside,
    fill_tree_cache,
    run_config,
    start_run,
)
from agentctl.services.lifecycle.worker import InlineWork


class SubmitAndRunWork(InlineWork, SubmitWork, Protocol):
    """The submission's transaction and the run's."""


class SubmitAndRunStore(StartStore, SubmitStore, Protocol):
    """The part of the storage port `task submit --run` uses (any `Storage` is one): the
    submission's (`SubmitStore`) and `run start`'s (`StartStore`). Nearly every transaction
    the store has (not messages, approvals or pull requests), but few of its reads, and never
    its audit, checkpoint or signing key."""

    def unit_of_work(self) -> AbstractContextManager[SubmitAndRunWork]: ...


@dataclass(frozen=True, kw_only=True)
class SubmitAndRun:
    """A task to submit (`cwd` resolves its repository and files), and the run to start right
    away, if any."""

    request: TaskRequest
    cwd: Path
    run: RunChoices | None = None


@dataclass(frozen=True, slots=True)
class SubmittedRun:
    """The stored task (READY_FOR_RUN, or POLICY_DENIED with its reason) and its run, when one
    was chosen and policy let it start."""

    task: Task
    run: StartedRun | None = None


def submit_and_run(storage: SubmitAndRunStore, config: Config, command: SubmitAndRun) -> SubmittedRun:
    how = command.run
    inline = how is not None and not how.detach
    if how is not None and inline:
        check_sandbox_beside(config, no_sandbox=how.no_sandbox)
    fills: list[Prefetch | None] = []
    looks: list[CheckoutChanges] = []

    def sandbox_ready() -> None:
        """A run this machine cannot sandbox stores nothing and checks nothing out."""
        if how is not None and inline:
            run_config(config, no_sandbox=how.no_sandbox)

    def resolved(repository: str, commit: str, base_ref: str) -> None:
        if how is None:
            return
        sandbox_ready()
        looks.append(CheckoutChanges(repository, base_ref))
        # a kept workspace is a checkout of its own; a queued run, its worker's
        if not how.detach and not how.keep_workspace and how.state_home is not None:
            fills.append(fill_tree_cache(config, how.state_home, repository, commit))

    try:
        submitted = submit_and_resolve(storage, config, command.request, cwd=command.cwd,
                                       resolved=resolved, storing=sandbox_ready)
        task = submitted.task
        if how is None or task.status is TaskStatus.POLICY_DENIED:
            return SubmittedRun(task)
        started = start_run(storage, config, StartRun(
            task=task.task_id, how=how, base_commit=submitted.base_commit),
            changes=looks[0] if looks else None)
        return SubmittedRun(task, started)
    finally:
        for look in looks:
            look.close()
        for fill in fills:
            if fill is not None:
                fill.stop()
