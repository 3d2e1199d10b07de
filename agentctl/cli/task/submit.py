"""`agentctl task submit`: a task from flags, a request file or a dialog, and with `--run`
its run; the commands that read tasks are in `show`."""


import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.context import State, state
from agentctl.cli.options import AGENT_SPECS, Flag, JsonOption
from agentctl.cli.output import emit_json, hint, out
from agentctl.cli.running import report_run, run_here_or_queue
from agentctl.domain.enums import RunStatus, TaskStatus
from agentctl.domain.errors import BadInput, PolicyDenied
from agentctl.domain.run import Run
from agentctl.domain.task import Task
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
    ctx: typer.Context,
    repo: Annotated[str | None, typer.Option("--repo", metavar="PATH|URL",
                    help="The repository: a local git work tree, a git URL, or a config alias.")] = None,
    base: Annotated[str | None, typer.Option("--base", metavar="REF",
                    help="Base ref to work from. (default: the repository's current branch)")] = None,
    type_: Annotated[str | None, typer.Option("--type", metavar="TYPE", help=(
        "dependency_upgrade, api_migration, bug_fix, refactor, test_fix, lint_fix, docs or custom."
    ))] = None,
    instruction: Annotated[str | None, typer.Option("--instruction", metavar="TEXT",
                           help="What to change, in words.")] = None,
    title: Annotated[str | None, typer.Option(
        "--title", metavar="TEXT", help="Short title. (default: first line of the instruction)",
    )] = None,
    allow: Annotated[list[str] | None, typer.Option("--allow", metavar="GLOB",
                     help="Only paths matching these globs may change (repeatable).")] = None,
    forbid: Annotated[list[str] | None, typer.Option("--forbid", metavar="GLOB",
                      help="Paths matching these globs must not change (repeatable).")] = None,
    verify: Annotated[list[str] | None, typer.Option("--verify", metavar="CMD",
                      help="Verification command, added to config's (repeatable).")] = None,
    must_pass: Annotated[list[str] | None, typer.Option("--must-pass", metavar="TEST_ID", help=(
        "A test that must pass with the patch, as its runner names it (repeatable)."))] = None,
    test_patch: Annotated[str | None, typer.Option("--test-patch", metavar="FILE", help=(
        "A diff of tests over the base (SWE-bench's test_patch): the patch is judged by them, "
        "applied over its code, and its own edits to them do not count."))] = None,
    allow_removed_tests: Annotated[bool, Flag("--allow-removed-tests", help=(
        "Tests that passed on the base may vanish (a task that removes tests)."))] = False,
    autonomy: Annotated[str | None, typer.Option("--autonomy", metavar="LEVEL", help=(
        "dry_run, draft_pr, supervised_pr or auto_pr. (default: policy.default_autonomy)"))] = None,
    label: Annotated[list[str] | None, typer.Option("--label", metavar="K=V",
                     help="Label (repeatable).")] = None,
    session: Annotated[str | None, typer.Option("--session", metavar="ID",
                       help="The session this task came from.")] = None,
    file: Annotated[Path | None, typer.Option("--file", metavar="TASK.json|TASK.toml", help=(
        "Read the request from a file (the seed's request JSON as is); flags override it."))] = None,
    run_now: Annotated[bool, Flag("--run", help="Start a run right away.")] = False,
    agent: Annotated[str | None, typer.Option("--agent", metavar="SPEC", help=(
        f"With --run: {AGENT_SPECS}."))] = None,
    detach: Annotated[bool, Flag("--detach", help="With --run: queue the run for a "
                      "worker and return at once.")] = False,
    keep_workspace: Annotated[bool, Flag("--keep-workspace", help="With --run: keep the "
                              "workspace after the run.")] = False,
    interactive: Annotated[bool, Flag("--interactive", help="With --run: ask at the terminal "
                           "before a tool call that matches an `ask` rule.")] = False,
    no_input: Annotated[bool, Flag("--no-input", help="Never ask: what is missing is an "
                        "error, as when stdin is not a terminal.")] = False,
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
    task_id = submitted.task.task_id

    def card() -> None:  # the task as the run left it (COMPLETED, FAILED, ...)
        with current.views(RunViews) as views:
            waiting = views.runs(limit=1, task_id=task_id, status=RunStatus.NEEDS_APPROVAL)
            print_task(views.task(task_id), next(iter(waiting), None))

    assert submitted.run is not None
    raise typer.Exit(report_run(current, submitted.run, detached=detach, as_json=as_json,
                                before=card))


def _show_task(submitted: SubmittedRun, as_json: bool) -> None:
    """The stored task; a policy denial is exit 2 with its reason."""
    task = submitted.task
    if as_json:
        emit_json(task)
    else:
        print_task(task)
    if task.status is TaskStatus.POLICY_DENIED:
        raise PolicyDenied(f"task {task.task_id} denied by policy: {task.status_reason}")


def print_task(task: Task, awaiting: Run | None = None) -> None:
    """The task's card. Rich's tables are imported here, for text only: a run's own report,
    and `--json`, print none."""
    from agentctl.cli.render.tasks import task_detail

    out().print(task_detail(task, awaiting))


def _at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _completed(current: State, request: TaskRequest, *, ask: bool) -> TaskRequest:
    """The request with what `--session` settled, then (at a terminal) what the person answers;
    the repository you stand in when none is named."""
    if not (ask or request.session_id or not request.repository):
        return request  # nothing to settle or ask: the dialog (and Rich's prompts) stays unread
    from agentctl.cli.task.asking import completed

    return completed(current, request, ask=ask)
