"""`run start` as one use case: the request says which task, which agent and how; the use case
holds the sandbox refusal, the warnings before the run, the signal policy, the run's options
from the config and the trace export after it, so the command line only parses, calls this and
renders. `task submit --run` is `submit_and_run` (services/actions/submit_and_run.py)."""

from __future__ import annotations

import signal
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from agentctl.config import Config
from agentctl.domain.agent import AgentSpec
from agentctl.domain.run import Run
from agentctl.domain.sandbox import SandboxMode, SandboxProfile
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.execution.sandboxing.bubblewrap import check_beside, require
from agentctl.execution.workspaces import overlay
from agentctl.execution.workspaces.cache_fill import Prefetch
from agentctl.execution.workspaces.checkout_changes import CheckoutChanges
from agentctl.execution.workspaces.tree_cache import in_home
from agentctl.services.attempts.attempt import Progress
from agentctl.services.attempts.baseline_cache import FOLDER as BASELINES
from agentctl.services.attempts.pipeline import RunOptions
from agentctl.services.lifecycle.leftovers import (
    DueReads,
    NoticeStore,
    notice_expired,
    requeued_notice,
)
from agentctl.services.lifecycle.worker import (
    InlineReads,
    InlineStore,
    InlineWork,
    create_and_run,
    prefetch_base,
)
from agentctl.services.ports import Approver, RunObserver
from agentctl.services.queries.telemetry import (
    TraceReads,
    TraceStore,
    configured_endpoint,
    has_ended,
)


class StartReads(InlineReads, DueReads, TraceReads, Protocol):
    """A run's reads here, the cheap look for expired leases, and what its trace is planned
    from."""


class StartStore(InlineStore, NoticeStore, TraceStore, Protocol):
    """The part of the storage port `run start` uses (any `Storage` is one): creating and
    running the run here (`InlineStore`), ending the runs whose `run start` died first
    (`NoticeStore`), and sending the trace after it (`TraceStore`)."""

    def unit_of_work(self) -> AbstractContextManager[InlineWork]: ...
    def reads(self) -> AbstractContextManager[StartReads]: ...


def _quiet(_message: str) -> None:
    """No status line."""


@dataclass(frozen=True, kw_only=True)
class RunChoices:
    """How a run goes, as the person chose: which agent, queued or here, and what watches it."""

    agent: AgentSpec
    detach: bool = False  # queue it for `agentctl worker` and return at once
    keep_workspace: bool = False
    no_sandbox: bool = False  # unconfined: recorded, and the verdict then needs a human
    state_home: Path | None = None  # hidden from the run's processes; holds the baseline cache
    approver: Approver | None = None  # asks a person about `ask` rules (None: nobody to ask)
    progress: Progress = _quiet
    observer: RunObserver | None = None


@dataclass(frozen=True, kw_only=True)
class StartRun:
    """A run to start: the task (id or unique prefix), and how."""

    task: str
    how: RunChoices
    # the commit the task's base ref named when it was submitted, by this same command (None:
    # resolved as the run is created)
    base_commit: str | None = None


@dataclass(frozen=True, slots=True)
class StartedRun:
    """What a started run shows: the run as it ended (or was queued), under the config it ran
    with (the sandbox it had)."""

    run: Run
    config: Config


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the run of this task here; it ended CANCELLED on record."""

    def __init__(self, task: str) -> None:
        super().__init__(task)
        self.task = task


def prepare_views() -> None:
    """For a normal user, a user and mount namespace of agentctl's own, where the tree cache's
    views mount without root (a no-op for root, or where the kernel refuses: full checkouts)."""
    overlay.prepare()


def parse_agent(text: str, cwd: Path) -> AgentSpec:
    """`--agent` as typed, checked before anything is stored (a plan parsed, a file pinned)."""
    return parse_agent_spec(text, cwd)


def run_config(config: Config, *, no_sandbox: bool = False) -> Config:
    """The config a run is created under: `--no-sandbox` turns the sandbox off; a sandbox that
    cannot start on this machine refuses the run (BadInput: one line, exit 2) before anything
    is stored. The check runs once per process, so asking again costs nothing."""
    if no_sandbox:
        config = replace(config, sandbox=replace(config.sandbox, mode=SandboxMode.OFF))
    require(SandboxProfile(mode=config.sandbox.mode))
    return config


def check_sandbox_beside(config: Config, *, no_sandbox: bool = False) -> None:
    """Start the check `run_config` waits for on a thread, for a submit that resolves its
    repository first: a sandboxed run's bwrap start-up runs beside the resolution's gits."""
    if not no_sandbox and SandboxProfile(mode=config.sandbox.mode).enabled:
        check_beside()


def fill_tree_cache(config: Config, state_home: Path, repository: str,
                    commit: str) -> Prefetch | None:
    """Start checking the base out into the tree cache, for a run about to be created here
    (`task submit --run` calls it as soon as the base ref is resolved, so the checkout runs
    while the task and the run are stored): stop it once the run has ended."""
    return prefetch_base(repository, commit, in_home(state_home, config.store.tree_cache_mb))


def start_run(storage: StartStore, config: Config, request: StartRun, *,
              changes: CheckoutChanges | None = None) -> StartedRun:
    """The run, queued under a frozen spec and, unless detached, executed here until it ends
    (or waits for a human), then its trace sent when one is configured. Before it: the sandbox
    refusal, the warning about the checkout's uncommitted changes (`changes`: the look at them,
    started already), and the runs whose `run start` died ended first. Here, SIGTERM stops the
    run as Ctrl-C does (KeyboardInterrupt: it ends CANCELLED, on record)."""
    how = request.how
    config = run_config(config, no_sandbox=how.no_sandbox)  # refused before a word or a row
    if how.observer is not None:
        if changes is None:
            with storage.reads() as reads:
                task = reads.task(request.task)
            changes = CheckoutChanges(task.repository or "", task.base_ref)
        warning = changes.warning()
        if warning:
            how.observer.notice(warning)
    # a run whose `run start` died ends first, or goes back to the queue (which is said)
    for requeued in notice_expired(storage):
        if how.observer is not None:
            how.observer.notice(requeued_notice(requeued))
    if not how.detach:

        signal.signal(signal.SIGTERM, signal.default_int_handler)
    home = how.state_home
    options = RunOptions(
        keep_workspace=how.keep_workspace, approver=how.approver,
        progress=how.progress, observer=how.observer,
        redact_logs_up_to=config.verification.redact_logs_up_to_bytes,
        baseline_cache=home / BASELINES if home is not None else None,
        concurrent_baseline=config.verification.baseline_concurrent,
        # a kept workspace outlives the run: its own checkout, not a view of the cache
        tree_cache=None if how.keep_workspace or home is None
        else in_home(home, config.store.tree_cache_mb),
        protected=(home,) if home is not None else (),
        trace_endpoint=configured_endpoint(config),
        artifact_outage_seconds=config.store.artifact_outage_seconds)
    try:
        run = create_and_run(storage, config, request.task, agent=how.agent,
                             detach=how.detach, options=options,
                             base_commit=request.base_commit)
    except RunInterrupted:
        raise
    except KeyboardInterrupt as stopped:
        raise RunInterrupted(request.task) from stopped
    if not how.detach:
        _trace_after_run(storage, config, run)  # after the verdict: never on the run's path
    return StartedRun(run, config)


def _trace_after_run(storage: TraceStore, config: Config, run: Run) -> None:
    """The ended run's trace, sent when an endpoint is configured: only then are the planner
    and the exporter imported (a run without one loads neither)."""
    endpoint = configured_endpoint(config)
    if endpoint is None or not has_ended(run):
        return
    from agentctl.services.queries.trace_export import send_after_run

    send_after_run(storage, config, run, endpoint)
