"""`run start` (and `task submit --run`) as one use case: the request says which task, which
agent and how; the use case holds the sandbox refusal and builds the run's options from the
config, so the command line only parses, calls this and renders."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from agentctl.config import Config
from agentctl.domain.agent import AgentSpec
from agentctl.domain.run import Run
from agentctl.domain.sandbox import SandboxMode, SandboxProfile
from agentctl.execution.bubblewrap import require
from agentctl.execution.cache_fill import Prefetch
from agentctl.execution.tree_cache import in_home
from agentctl.services.attempts.attempt import Progress
from agentctl.services.attempts.baseline_cache import FOLDER as BASELINES
from agentctl.services.attempts.pipeline import RunOptions
from agentctl.services.lifecycle.worker import create_and_run, prefetch_base
from agentctl.services.ports import Approver, RunObserver
from agentctl.services.queries.telemetry import configured_endpoint
from agentctl.services.unit_of_work import Storage


def _quiet(_message: str) -> None:
    """No status line."""


@dataclass(frozen=True, kw_only=True)
class StartRun:
    """A run to start: the task (id or unique prefix) and agent, and how it runs."""

    task: str
    agent: AgentSpec
    detach: bool = False  # queue it for `agentctl worker` and return at once
    keep_workspace: bool = False
    no_sandbox: bool = False  # unconfined: recorded, and the verdict then needs a human
    state_home: Path | None = None  # hidden from the run's processes; holds the baseline cache
    approver: Approver | None = None  # asks a person about `ask` rules (None: nobody to ask)
    progress: Progress = _quiet
    observer: RunObserver | None = None
    # the commit the task's base ref named when it was submitted, by this same command (None:
    # resolved as the run is created)
    base_commit: str | None = None


def run_config(config: Config, *, no_sandbox: bool = False) -> Config:
    """The config a run is created under: `--no-sandbox` turns the sandbox off; a sandbox that
    cannot start on this machine refuses the run (BadInput: one line, exit 2) before anything
    is stored. The check runs once per process, so asking again costs nothing."""
    if no_sandbox:
        config = replace(config, sandbox=replace(config.sandbox, mode=SandboxMode.OFF))
    require(SandboxProfile(mode=config.sandbox.mode))
    return config


def fill_tree_cache(config: Config, state_home: Path, repository: str,
                    commit: str) -> Prefetch | None:
    """Start checking the base out into the tree cache, for a run about to be created here
    (`task submit --run` calls it as soon as the base ref is resolved, so the checkout runs
    while the task and the run are stored): stop it once the run has ended."""
    return prefetch_base(repository, commit, in_home(state_home, config.store.tree_cache_mb))


def start_run(storage: Storage, config: Config, request: StartRun) -> Run:
    """The run, queued under a frozen spec and, unless detached, executed here until it ends
    (or waits for a human)."""
    config = run_config(config, no_sandbox=request.no_sandbox)
    home = request.state_home
    options = RunOptions(
        keep_workspace=request.keep_workspace, approver=request.approver,
        progress=request.progress, observer=request.observer,
        redact_logs_up_to=config.verification.redact_logs_up_to_bytes,
        baseline_cache=home / BASELINES if home is not None else None,
        concurrent_baseline=config.verification.baseline_concurrent,
        # a kept workspace outlives the run: its own checkout, not a view of the cache
        tree_cache=None if request.keep_workspace or home is None
        else in_home(home, config.store.tree_cache_mb),
        protected=(home,) if home is not None else (),
        trace_endpoint=configured_endpoint(config),
        artifact_outage_seconds=config.store.artifact_outage_seconds)
    return create_and_run(storage, config, request.task, agent=request.agent,
                          detach=request.detach, options=options,
                          base_commit=request.base_commit)
