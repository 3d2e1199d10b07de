"""What `run start` and `task submit --run` share: the live status around the use case that
runs, the person's answers to `ask` rules, and the run's outcome rendered with the exit code
its verdict calls for."""

from collections.abc import Callable
from typing import TypeVar

import typer

from agentctl.cli.context import State
from agentctl.cli.long_work import begin_long_work
from agentctl.cli.output import emit_json, hint, live_status, note, out
from agentctl.cli.run.document import run_document_of
from agentctl.cli.unsandboxed import warn_unsandboxed
from agentctl.domain.agent import AgentSpec
from agentctl.domain.enums import VerdictStatus
from agentctl.domain.errors import BadInput
from agentctl.domain.verdict import exit_code_for
from agentctl.services.lifecycle.start import RunChoices, RunInterrupted, StartedRun
from agentctl.store.run_views import RunViews

Started = TypeVar("Started")


def run_here_or_queue(current: State, label: str, call: Callable[[RunChoices], Started], *,
                      agent: AgentSpec, detach: bool, keep_workspace: bool,
                      interactive: bool, no_sandbox: bool = False) -> Started:
    """Call the use case that starts a run, under a live status line (and a terminal approver
    with `--interactive`); a run stopped by Ctrl-C is named, then exit 130."""
    begin_long_work()  # what is made from here on is the run's
    if interactive:
        from agentctl.cli import prompt  # Rich's prompts, for `--interactive` alone

        if detach:
            raise BadInput("--interactive needs the run to execute here; drop --detach")
        prompt.check_terminal()
    with live_status(label) as progress:
        approver = None
        if interactive:
            approver = prompt.terminal_approver(progress.paused)
        how = RunChoices(agent=agent, detach=detach, keep_workspace=keep_workspace,
                         no_sandbox=no_sandbox, state_home=current.home.root,
                         approver=approver, progress=progress, observer=progress)
        try:
            return call(how)
        except RunInterrupted as stopped:  # it ended CANCELLED on record: say which, then 130
            _say_cancelled(current, stopped.task)
            raise typer.Exit(130) from None


def report_run(current: State, started: StartedRun, *, detached: bool, as_json: bool,
               before: Callable[[], None] = lambda: None) -> int:
    """The run's outcome (or that it was queued), and the exit code its verdict calls for.
    `before` prints what goes first (the task card of `task submit`, in its final state)."""

    run = started.run
    warn_unsandboxed(started.config)
    document = run_document_of(current, run)
    if as_json:
        emit_json(document)
    else:
        before()
        if detached:
            out().print(f"{run.run_id} queued (run #{run.number} of {run.task_id})")
        else:
            from agentctl.cli.render.runs import run_outcome

            out().print(run_outcome(document))
    if detached:
        hint("a worker executes it: agentctl worker --once")
        return 0
    verdict = document["verdict"]
    return exit_code_for(VerdictStatus(verdict["status"]) if verdict else None)


def _say_cancelled(current: State, task_text: str) -> None:
    with current.views(RunViews) as views:
        task = views.task(task_text)
        runs = views.runs(limit=1, task_id=task.task_id)
    what = f"run {runs[0].run_id}" if runs else f"the run of {task.task_id}"
    note(f"agentctl: {what} cancelled")
