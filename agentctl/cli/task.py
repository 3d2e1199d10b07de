"""`agentctl task`: submit, list, show and cancel tasks."""


import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.cli.context import State, state
from agentctl.cli.options import (
    CancelledByOption,
    CancelReasonOption,
    Flag,
    FullOption,
    JsonOption,
    NewestLimitOption,
    RepoOption,
    status_filter,
)
from agentctl.cli.output import emit_json, hint, out
from agentctl.domain.enums import RunStatus, TaskStatus
from agentctl.domain.errors import BadInput, PolicyDenied
from agentctl.domain.serialize import to_json

if TYPE_CHECKING:
    from agentctl.services.actions.requests import TaskRequest
    from agentctl.services.actions.submit_and_run import SubmittedRun
from agentctl.cli.output import note

app = typer.Typer(help="Submit and inspect tasks: structured, executable intent.",
                  no_args_is_help=True)



@app.command()
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
        "With --run: claude[:MODEL], codex[:MODEL], copilot[:MODEL], gemini[:MODEL], "
        "opencode[:PROVIDER/MODEL], script:PLAN.toml, patch:FILE.diff, command:CMD or noop."))] = None,
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
    from agentctl.services.actions.requests import (
        TaskRequest,
        overridden,
        parse_labels,
        read_request_file,
    )
    from agentctl.services.actions.submit_and_run import SubmitAndRun, submit_and_run

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
    from agentctl.cli.running import report_run, run_here_or_queue
    from agentctl.services.lifecycle.start import parse_agent

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
        from agentctl.cli.render.tasks import task_detail

        with current.views() as views:
            waiting = views.runs(limit=1, task_id=task_id, status=RunStatus.NEEDS_APPROVAL)
            out().print(task_detail(views.task(task_id), next(iter(waiting), None)))

    assert submitted.run is not None
    raise typer.Exit(report_run(current, submitted.run, detached=detach, as_json=as_json,
                                before=card))


def _show_task(submitted: "SubmittedRun", as_json: bool) -> None:
    """The stored task; a policy denial is exit 2 with its reason."""
    task = submitted.task
    if as_json:
        emit_json(task)
    else:
        from agentctl.cli.render.tasks import task_detail  # text only: Rich's tables

        out().print(task_detail(task))
    if task.status is TaskStatus.POLICY_DENIED:
        raise PolicyDenied(f"task {task.task_id} denied by policy: {task.status_reason}")


def _at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _completed(current: State, request: "TaskRequest", *, ask: bool) -> "TaskRequest":
    """The request with what `--session` settled, then (at a terminal) what the person answers;
    the repository you stand in when none is named."""
    if not (ask or request.session_id or not request.repository):
        return request  # nothing to settle or ask: the dialog (and Rich's prompts) stays unread
    from agentctl.cli import dialog
    from agentctl.services.actions.requests import overridden

    if request.session_id:
        with current.views() as views:
            _, messages = views.session(request.session_id)
        request = overridden(dialog.settled(messages), request)
    if not ask:
        if not request.repository and (here := dialog.here(Path.cwd())):
            request = replace(request, repository=here)
        return request
    from agentctl.services.actions.requests import detected_test_commands

    config = current.config
    here = dialog.here(Path.cwd())
    checks = bool(config.verification.commands)
    request, exchange = dialog.converse(request, dialog.Defaults(
        here=here, allowed=config.boundary.allowed, forbidden=config.boundary.forbidden,
        checks=checks, autonomy=config.policy.default_autonomy,
        detected=detected_test_commands(Path(here)) if here and not checks else ()))
    from agentctl.services.actions.sessions import add_message, start_session
    from agentctl.services.actions.tasks import current_user

    store = current.store
    session_id = request.session_id or start_session(
        store, title=dialog.title_of(request), owner=current_user(),
        clock=lambda: exchange[0].asked_at).session_id  # it began with the first question
    for said in exchange:  # each stamped when it was said, not when the task was submitted
        add_message(store, session_id, role="system", content=said.question,
                    at=said.asked_at)
        add_message(store, session_id, role="user", content=said.answer,
                    at=said.answered_at)
    if exchange[-1].answer != "yes":

        note(f"not submitted; the questions and answers are in session {session_id}")
        raise typer.Exit(1)
    return replace(request, session_id=session_id)


@app.command("list")
def list_(
    ctx: typer.Context,
    status: Annotated[str | None, typer.Option("--status", metavar="S",
                      help="Only tasks in this status.")] = None,
    session: Annotated[str | None, typer.Option("--session", metavar="ID",
                       help="Only tasks of this session.")] = None,
    repo: RepoOption = None,
    limit: NewestLimitOption = 50,
    full: FullOption = False,
    as_json: JsonOption = False,
) -> None:
    """List tasks, newest first."""
    wanted = status_filter(TaskStatus, status, "task")
    current = state(ctx)
    repository = current.repository_filter(repo)
    with current.views() as views:
        session_id = views.resolve("session", session) if session else None
        tasks = views.tasks(limit=limit, status=wanted,
                            session_id=session_id, repository=repository)
        short = {} if full or as_json else views.short_ids("task", [t.task_id for t in tasks])
        awaiting = set() if as_json else {r.task_id for r in views.runs(
            limit=10_000, status=RunStatus.NEEDS_APPROVAL, repository=repository)}
    if as_json:
        emit_json(tasks)
        return
    if not tasks:
        out().print(f"no tasks of {repository} yet" if repository else
                    "no tasks yet; submit one with 'agentctl task submit'")
        return
    from agentctl.cli.render.tasks import task_table

    out().print(task_table(tasks, short=short, width=out().width, awaiting=awaiting))


@app.command()
def show(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Argument(metavar="TASK", help="Task id or unique prefix.")],
    as_json: JsonOption = False,
) -> None:
    """Show one task and its runs."""
    with state(ctx).views() as views:
        task = views.task(task_id)
        runs = views.runs(limit=1000, task_id=task.task_id)
        verdicts = views.run_summaries([r.run_id for r in runs])
        prs = {r.run_id: views.pull_requests(r.run_id) for r in runs}
    run_rows = [{"runId": r.run_id, "number": r.number, "status": r.status.value,
                 "verdict": verdicts[r.run_id]["status"] if r.run_id in verdicts else None,
                 "prState": prs[r.run_id][-1].state.value if prs[r.run_id] else None}
                for r in sorted(runs, key=lambda r: r.number)]
    # The task's status follows its newest PR: a task whose PR merged reads so.
    newest = max((p for found in prs.values() for p in found), key=lambda p: p.created_at,
                 default=None)
    pull_request = None if newest is None else {
        "state": newest.state.value, "forge": newest.forge.value, "number": newest.number,
        "url": newest.url, "runId": newest.run_id}
    awaiting = max((r for r in runs if r.status is RunStatus.NEEDS_APPROVAL),
                   key=lambda r: r.number, default=None)
    if as_json:
        document = to_json(task)
        document["runs"] = run_rows  # type: ignore[index]
        document["awaitingApproval"] = awaiting and awaiting.run_id  # type: ignore[index]
        document["pullRequest"] = pull_request  # type: ignore[index]
        emit_json(document)
        return
    from agentctl.cli.render.tasks import task_detail

    out().print(task_detail(task, awaiting))
    if pull_request is not None:
        out().print(f"  PR {pull_request['state']}" + (f"  {pull_request['url']}"
                                                       if pull_request["url"] else ""))
    for row in run_rows:
        out().print(f"  run #{row['number']}  {row['runId']}  {row['status']}  "
                    f"{row['verdict'] or ''}".rstrip() + (f"  PR {row['prState']}"
                                                          if row["prState"] else ""))


@app.command()
def cancel(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Argument(metavar="TASK", help="Task id or unique prefix.")],
    reason: CancelReasonOption = "cancelled by user",
    by: CancelledByOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cancel a task: no new run is scheduled; its queued and running runs are cancelled."""
    from agentctl.services.actions.tasks import cancel_task, current_user

    task = cancel_task(state(ctx).store, task_id, by=by or current_user(), reason=reason)
    if as_json:
        emit_json(task)
    else:
        out().print(f"cancelled {task.task_id}")
