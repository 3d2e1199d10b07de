"""`agentctl run start` (and `task submit --run`): run a task here, or queue it for a worker,
and answer the exit code its verdict calls for."""


import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.cli.context import State, state
from agentctl.cli.main import start_up_done
from agentctl.cli.options import Flag, JsonOption
from agentctl.cli.output import emit_json, hint, live_status, note, out
from agentctl.cli.run.document import run_document_of
from agentctl.cli.sandbox import warn_unsandboxed
from agentctl.domain.enums import VerdictStatus
from agentctl.domain.errors import BadInput

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentctl.domain.agent import AgentSpec


def start(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Argument(metavar="TASK", help="Task id or unique prefix.")],
    agent: Annotated[str | None, typer.Option("--agent", metavar="SPEC", help=(
        "claude[:MODEL], codex[:MODEL], opencode[:PROVIDER/MODEL], script:PLAN.toml, "
        "patch:FILE.diff, command:CMD or noop. (default: agent.default)"))] = None,
    detach: Annotated[bool, Flag("--detach", help="Queue the run for `agentctl worker` "
                      "and return at once.")] = False,
    interactive: Annotated[bool, Flag("--interactive", help="Ask at the terminal before "
                           "running a tool call that matches an `ask` rule.")] = False,
    keep_workspace: Annotated[bool, Flag("--keep-workspace", help="Keep the workspace "
                              "after the run, for inspection.")] = False,
    no_sandbox: Annotated[bool, Flag("--no-sandbox", help="Run the agent, tools, checks and "
                          "judge unconfined (recorded; the verdict then needs a human "
                          "approval).")] = False,
    as_json: JsonOption = False,
) -> None:
    """Run a task: workspace, agent, patch, verification, judge, verdict. Exit 1 unless the
    verdict is SUCCESS or SUCCESS_NEEDS_REVIEW."""
    from agentctl.execution.agents.spec import parse_agent_spec

    current = state(ctx)
    spec = parse_agent_spec(agent or current.config.agent.default, Path.cwd())
    raise typer.Exit(execute_and_report(current, task_id, spec, detach=detach,
                                        keep_workspace=keep_workspace, as_json=as_json,
                                        interactive=interactive, no_sandbox=no_sandbox))


def execute_and_report(current: State, task_id: str, agent: "AgentSpec", *, detach: bool,
                       keep_workspace: bool, as_json: bool, interactive: bool = False,
                       before: "Callable[[], None]" = lambda: None,
                       no_sandbox: bool = False, base_commit: str | None = None,
                       changes: "CheckoutChanges | None" = None) -> int:
    """`run start` and `task submit --run`: call the start_run use case, render what it did,
    and answer the exit code its verdict calls for. `before` prints what goes first (the task
    card of `task submit`, in its final state); `base_commit` is what `task submit` resolved
    the base ref to, and `changes` its look at the checkout's uncommitted changes."""
    from agentctl.domain.verdict import exit_code_for
    from agentctl.services.lifecycle.leftovers import notice_expired
    from agentctl.services.lifecycle.start import StartRun, run_config, start_run
    from agentctl.services.queries.telemetry import trace_after_run

    start_up_done()  # what is made from here on is the run's
    if interactive:
        from agentctl.cli.prompt import check_terminal

        if detach:
            raise BadInput("--interactive needs the run to execute here; drop --detach")
        check_terminal()
    config = run_config(current.config, no_sandbox=no_sandbox)  # refused before a word or a row
    _warn_uncommitted(current, task_id, changes)
    notice_expired(current.store)  # a run of the task whose `run start` died ends first
    if not detach:  # SIGTERM stops a run here as Ctrl-C does: it ends CANCELLED, on record
        import signal

        signal.signal(signal.SIGTERM, signal.default_int_handler)
    with live_status(f"task {task_id}") as progress:
        approver = None
        if interactive:
            from agentctl.cli.prompt import terminal_approver

            approver = terminal_approver(progress.paused)
        request = StartRun(task=task_id, agent=agent, detach=detach,
                           keep_workspace=keep_workspace, no_sandbox=no_sandbox,
                           state_home=current.home.root, approver=approver, progress=progress,
                           observer=progress, base_commit=base_commit)
        try:
            run = start_run(current.store, current.config, request)
        except KeyboardInterrupt:  # the run ended CANCELLED on record; say which, then 130
            _say_cancelled(current, task_id)
            raise typer.Exit(130) from None
    warn_unsandboxed(config)
    if not detach:
        trace_after_run(current.store, config, run)  # after the verdict: never on the run's path
    document = run_document_of(current, run)
    if as_json:
        emit_json(document)
    else:
        before()
        if detach:
            out().print(f"{run.run_id} queued (run #{run.number} of {run.task_id})")
        else:
            from agentctl.cli.render.runs import run_outcome

            out().print(run_outcome(document))
    if detach:
        hint("a worker executes it: agentctl worker --once")
        return 0
    verdict = document["verdict"]
    return exit_code_for(VerdictStatus(verdict["status"]) if verdict else None)




class CheckoutChanges:
    """`git status` of a task's local checkout, started as soon as the repository is known:
    `task submit --run` starts it when the base ref is resolved, so that it runs while the task
    and the run are stored (on a checkout of 200,000 files it takes a fifth of a second)."""

    def __init__(self, repository: str, base_ref: str) -> None:
        from agentctl.execution.task_repository import is_url

        self.repository, self.base_ref = repository, base_ref
        self._process: subprocess.Popen[str] | None = None
        if repository and not is_url(repository) and Path(repository).is_dir():
            try:
                # GIT_OPTIONAL_LOCKS=0: a look, not a refresh; the person's index is theirs
                # (rewriting it costs a large checkout's disk, and their own git its lock)
                self._process = subprocess.Popen(
                    ["git", "-C", repository, "status", "--porcelain", "--untracked-files=no"],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                    env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
            except OSError:
                pass

    def changed(self) -> int:
        """How many tracked files differ from the checkout's commit (0 when git cannot say)."""
        if self._process is None:
            return 0
        try:
            output, _ = self._process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.close()
            return 0
        return len(output.strip().splitlines())

    def close(self) -> None:
        """Its git ended, if it still runs (the command failed before asking for it)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()


def _warn_uncommitted(current: State, task_text: str,
                      changes: "CheckoutChanges | None" = None) -> None:
    """A run starts from the base ref's commit: say so when the checkout holds changes to
    tracked files that the run will not see (`changes`: the look at them, started already)."""
    if changes is None:
        with current.views() as views:
            task = views.task(task_text)
        changes = CheckoutChanges(task.repository or "", task.base_ref)
    count = changes.changed()
    if count:
        note(f"agentctl: warning: {changes.repository} has uncommitted changes ({count} "
             f"file{'s' if count != 1 else ''}); the run works on {changes.base_ref} as "
             "committed and will not see them")




def _say_cancelled(current: State, task_text: str) -> None:
    with current.views() as views:
        task = views.task(task_text)
        runs = views.runs(limit=1, task_id=task.task_id)
    what = f"run {runs[0].run_id}" if runs else f"the run of {task.task_id}"
    note(f"agentctl: {what} cancelled")
