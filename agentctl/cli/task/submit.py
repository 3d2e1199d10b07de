"""`agentctl task submit`: a task from flags, a request file or a dialog, and with `--run`
its run; the commands that read tasks are in `show`."""


import sys
from dataclasses import replace
from pathlib import Path

import typer

from agentctl.cli.context import State, state
from agentctl.cli.options import JsonOption
from agentctl.cli.output import emit_json, hint
from agentctl.cli.running import report_run, run_here_or_queue
from agentctl.cli.task import submit_options as so
from agentctl.cli.task.cards import print_task
from agentctl.domain.enums import RunStatus, TaskStatus
from agentctl.domain.errors import BadInput, PolicyDenied
from agentctl.services.actions.requests import (
    TaskRequest,
    overridden,
    parse_labels,
    read_request_file,
)
from agentctl.services.actions.submit_and_run import SubmitAndRun, SubmittedRun, submit_and_run
from agentctl.services.lifecycle.start import parse_agent
from agentctl.store.run_views import RunViews


def submit(
    ctx: typer.Context, repo: so.Repo = None, base: so.Base = None, type_: so.Type = None,
    instruction: so.Instruction = None, title: so.Title = None, allow: so.Allow = None,
    forbid: so.Forbid = None, verify: so.Verify = None, must_pass: so.MustPass = None,
    test_patch: so.TestPatch = None, allow_removed_tests: so.AllowRemovedTests = False,
    autonomy: so.Autonomy = None, label: so.Label = None, session: so.Session = None,
    file: so.File = None, run_now: so.RunNow = False, agent: so.Agent = None,
    detach: so.Detach = False, keep_workspace: so.KeepWorkspace = False,
    interactive: so.Interactive = False, no_input: so.NoInput = False,
    as_json: JsonOption = False,
) -> None:
    """Submit a task; policy decides READY_FOR_RUN or POLICY_DENIED (exit 2 with the reason).

    On a terminal it asks for what neither the flags nor the config give (the repository is the
    one you stand in; the autonomy proposed is policy.default_autonomy) and keeps the questions
    and answers, each with its time, in a session linked to the task."""
    if (agent or detach or keep_workspace or interactive) and not run_now:
        raise BadInput("--agent, --detach, --keep-workspace and --interactive need --run")
    request = overridden(read_request_file(file) if file is not None else TaskRequest(),
                         TaskRequest(
        repository=repo, base_ref=base, task_type=type_, instruction=instruction, title=title,
        autonomy_level=autonomy, session_id=session, allowed_paths=tuple(allow or ()),
        forbidden_paths=tuple(forbid or ()), verification_commands=tuple(verify or ()),
        labels=parse_labels(label) if label else {}, must_pass=tuple(must_pass or ()),
        allow_removed_tests=True if allow_removed_tests else None, test_patch=test_patch))
    current = state(ctx)
    request = _completed(current, request, ask=not no_input and _at_terminal())
    command = SubmitAndRun(request=request, cwd=Path.cwd())
    if not run_now:
        submitted = submit_and_run(current.store, current.config, command)
        _show_task(submitted, as_json)
        hint(f"next: agentctl run start {submitted.task.task_id}")
        return
    # a bad agent spec is refused before anything is stored
    spec = parse_agent(agent or current.config.agent.default, Path.cwd())
    submitted = run_here_or_queue(
        current, "task", lambda how: submit_and_run(current.store, current.config,
                                                    replace(command, run=how)),
        agent=spec, detach=detach, keep_workspace=keep_workspace, interactive=interactive)
    if submitted.run is None:  # denied by policy: no run
        _show_task(submitted, as_json)
    assert submitted.run is not None
    raise typer.Exit(report_run(current, submitted.run, detached=detach, as_json=as_json,
                                before=lambda: _card(current, submitted.task.task_id)))


def _card(current: State, task_id: str) -> None:
    """The task as its run left it (COMPLETED, FAILED, ...), with the run awaiting approval."""
    with current.views(RunViews) as views:
        waiting = views.runs(limit=1, task_id=task_id, status=RunStatus.NEEDS_APPROVAL)
        print_task(views.task(task_id), next(iter(waiting), None))


def _show_task(submitted: SubmittedRun, as_json: bool) -> None:
    """The stored task; a policy denial is exit 2 with its reason."""
    task = submitted.task
    if as_json:
        emit_json(task)
    else:
        print_task(task)
    if task.status is TaskStatus.POLICY_DENIED:
        raise PolicyDenied(f"task {task.task_id} denied by policy: {task.status_reason}")


def _at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _completed(current: State, request: TaskRequest, *, ask: bool) -> TaskRequest:
    """The request with what `--session` settled, then (at a terminal) what the person answers;
    the repository you stand in when none is named."""
    if not (ask or request.session_id or not request.repository):
        return request  # nothing to settle or ask: the dialog (and Rich's prompts) stays unread
    from agentctl.cli.task.asking import completed

    return completed(current, request, ask=ask)
