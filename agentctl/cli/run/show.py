"""`agentctl run list|show|diff`: what runs there are, what one did, and its patch."""


from contextlib import nullcontext
from typing import Annotated

import typer

from agentctl.cli.artifact import artifact_content, named_artifact, print_artifact
from agentctl.cli.context import State, state
from agentctl.cli.documents import run_document
from agentctl.cli.options import (
    Flag,
    FullOption,
    JsonOption,
    NewestLimitOption,
    NoPagerOption,
    RepoOption,
    RunArgument,
    status_filter,
)
from agentctl.cli.output import emit_json, note, out
from agentctl.cli.pager import page, pager_command
from agentctl.cli.render import runs as render
from agentctl.cli.render.diff import coloured
from agentctl.cli.render.runs import run_table
from agentctl.cli.render.style import printable
from agentctl.cli.run.replay_view import artifact_reader, print_replay, replay_keys
from agentctl.domain.clock import utcnow
from agentctl.domain.enums import RunStatus
from agentctl.domain.transitions import TERMINAL_RUN
from agentctl.services.lifecycle.leftovers import notice_expired, requeued_notice
from agentctl.store.blobs import BlobStore
from agentctl.store.views import Views


def list_(
    ctx: typer.Context,
    task: Annotated[str | None, typer.Option("--task", metavar="ID", help="Only runs of this "
                    "task.")] = None,
    status: Annotated[str | None, typer.Option("--status", metavar="S", help="Only runs in this "
                      "status, e.g. QUEUED.")] = None,
    repo: RepoOption = None,
    limit: NewestLimitOption = 50,
    full: FullOption = False,
    as_json: JsonOption = False,
) -> None:
    """List runs, newest first, with their verdicts."""

    wanted = status_filter(RunStatus, status, "run")
    current = state(ctx)
    _reclaim_expired(current)
    repository = current.repository_filter(repo)
    with current.views(Views) as views:
        task_id = views.resolve("task", task) if task else None
        runs = views.runs(limit=limit, task_id=task_id,
                          status=wanted,
                          repository=repository)
        documents = [run_document(views, run) for run in runs]
        task_ids = sorted({run.task_id for run in runs})
        repositories = views.repositories(task_ids)
        short = {} if full or as_json else {
            **views.short_ids("run", [run.run_id for run in runs]),
            **views.short_ids("task", task_ids)}
    if as_json:
        emit_json(documents)
    elif not documents:
        out().print(f"no runs of {repository} yet" if repository else
                    "no runs yet; start one with 'agentctl run start TASK'")
    else:

        out().print(run_table(documents, short=short, repositories=repositories,
                              width=out().width))




def _reclaim_expired(current: State) -> None:
    """Leases that ran out are reclaimed before runs are shown (what a killed `run start`
    left): one indexed read through the views, and the store (a write) only when one did, so a
    command that shows runs loads no `Store` otherwise."""
    with Views(current.home) as views:
        due = views.lease_due(utcnow())
    if due:
        for requeued in notice_expired(current.store):
            note(requeued_notice(requeued))


def show(
    ctx: typer.Context,
    run_id: RunArgument = None,
    tree: Annotated[bool, Flag("--tree", help="Attempts, steps, tool calls and artifacts."
                    )] = False,
    no_pager: NoPagerOption = False,
    as_json: JsonOption = False,
) -> None:
    """Show a run (the newest without an id); --tree draws everything it did (through a pager
    on a terminal, as `verdict explain`)."""

    current = state(ctx)
    _reclaim_expired(current)
    with current.views(Views) as views:
        run = views.run(run_id)
        document = run_document(views, run, tree=tree,
                                files=BlobStore(current.home.artifacts) if tree else None)
    report = None
    if run.replay_of is not None and (run.status in TERMINAL_RUN
                                      or run.status is RunStatus.NEEDS_APPROVAL):
        from agentctl.services.actions.replay import replay_report

        report = replay_report(current.store, run.run_id, read=artifact_reader(current))
        document.update(replay_keys(report))
    if as_json:
        emit_json(document)
        return

    paged = tree and pager_command(not no_pager) is not None
    with out().capture() if paged else nullcontext() as captured:
        out().print(render.run_tree(document) if tree else render.run_detail(document))
        if report is not None:
            print_replay(report)
    if captured is not None:  # a big run's tree is hundreds of lines: rendered, then paged
        page(captured.get())


def diff(
    ctx: typer.Context,
    run_id: RunArgument = None,
    no_pager: NoPagerOption = False,
) -> None:
    """Print a run's patch (patch.diff, verified by its hash), coloured on a terminal."""
    current = state(ctx)
    with current.views(Views) as views:
        artifact = named_artifact(views, run_id, "patch.diff")
    console = out()
    if not console.is_terminal:
        print_artifact(current.home.artifacts, artifact)
        return

    content = b"".join(artifact_content(current.home.artifacts, artifact))
    text = content.decode("utf-8", errors="replace")
    page(printable(text) if console.no_color or console.color_system is None
         else coloured(text),
         enabled=not no_pager)
