"""`agentctl task list|show`: what tasks there are, and one task with its runs."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import (
    FullOption,
    JsonOption,
    NewestLimitOption,
    RepoOption,
    status_filter,
)
from agentctl.cli.output import emit_json, out
from agentctl.cli.task.cards import print_task, print_tasks
from agentctl.domain.enums import RunStatus, TaskStatus
from agentctl.domain.serialize import to_json
from agentctl.store.run_views import RunViews


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
    with current.views(RunViews) as views:
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
    print_tasks(tasks, short=short, awaiting=awaiting)


def show(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Argument(metavar="TASK", help="Task id or unique prefix.")],
    as_json: JsonOption = False,
) -> None:
    """Show one task and its runs."""
    with state(ctx).views(RunViews) as views:
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
    print_task(task, awaiting)
    if pull_request is not None:
        out().print(f"  PR {pull_request['state']}" + (f"  {pull_request['url']}"
                                                       if pull_request["url"] else ""))
    for row in run_rows:
        out().print(f"  run #{row['number']}  {row['runId']}  {row['status']}  "
                    f"{row['verdict'] or ''}".rstrip() + (f"  PR {row['prState']}"
                                                          if row["prState"] else ""))
