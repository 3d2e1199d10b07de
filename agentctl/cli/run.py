"""`agentctl run`: start, list, show and cancel runs."""


from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.cli.context import State, state
from agentctl.cli.options import MAX_LIMIT, Flag, JsonOption, RunArgument
from agentctl.domain.enums import VerdictStatus

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentctl.domain.agent import AgentSpec
    from agentctl.domain.run import Run

app = typer.Typer(help="Runs: one execution of a task on a pinned commit, ending in a verdict.",
                  no_args_is_help=True)


@app.command()
def start(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Argument(metavar="TASK", help="Task id or unique prefix.")],
    agent: Annotated[str | None, typer.Option("--agent", metavar="SPEC", help=(
        "script:PLAN.toml, patch:FILE.diff, command:CMD or noop. (default: agent.default)"))] = None,
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
                       no_sandbox: bool = False) -> int:
    """`run start` and `task submit --run`: call the start_run use case, render what it did,
    and answer the exit code its verdict calls for. `before` prints what goes first (the task
    card of `task submit`, in its final state)."""
    from agentctl.cli.output import emit_json, live_status, note, out
    from agentctl.cli.sandbox import unsandboxed, warn_unsandboxed
    from agentctl.domain.errors import BadInput
    from agentctl.domain.verdict import exit_code_for
    from agentctl.services.leftovers import notice_expired
    from agentctl.services.pipeline import RunOptions
    from agentctl.services.worker import start_run

    if interactive:
        from agentctl.cli.prompt import check_terminal

        if detach:
            raise BadInput("--interactive needs the run to execute here; drop --detach")
        check_terminal()
    config = unsandboxed(current.config, no_sandbox)
    notice_expired(current.store)  # a run of the task whose `run start` died ends first
    if not detach:  # SIGTERM stops a run here as Ctrl-C does: it ends CANCELLED, on record
        import signal

        signal.signal(signal.SIGTERM, signal.default_int_handler)
    with live_status(f"task {task_id}") as progress:
        approver = None
        if interactive:
            from agentctl.cli.prompt import terminal_approver

            approver = terminal_approver(progress.paused)
        options = RunOptions(keep_workspace=keep_workspace, approver=approver, progress=progress,
                             redact_logs_up_to=config.verification.redact_logs_up_to_bytes,
                             baseline_cache=current.home.root / "baselines",
                             protected=(current.home.root,))
        run = start_run(current.store, config, task_id, agent=agent, detach=detach,
                        options=options)
    warn_unsandboxed(config)
    document = _document(current, run)
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
        note("a worker executes it: agentctl worker --once")
        return 0
    verdict = document["verdict"]
    return exit_code_for(VerdictStatus(verdict["status"]) if verdict else None)


def _document(current: State, run: "Run", *, tree: bool = False) -> dict:  # type: ignore[type-arg]
    from agentctl.cli.documents import run_document

    with current.views() as views:
        return run_document(views, views.run(run.run_id), tree=tree)


@app.command("list")
def list_(
    ctx: typer.Context,
    task: Annotated[str | None, typer.Option("--task", metavar="ID", help="Only runs of this "
                    "task.")] = None,
    status: Annotated[str | None, typer.Option("--status", metavar="S", help="Only runs in this "
                      "status, e.g. QUEUED.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_LIMIT,
                                       help="At most this many, newest first.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """List runs, newest first, with their verdicts."""
    from agentctl.cli.documents import run_document
    from agentctl.cli.output import emit_json, out
    from agentctl.domain.enums import RunStatus
    from agentctl.domain.errors import BadInput
    from agentctl.services.leftovers import notice_expired

    if status is not None and status.upper() not in RunStatus.__members__:
        raise BadInput(f"unknown run status {status!r}; expected one of: "
                       f"{', '.join(RunStatus.__members__)}")
    notice_expired(state(ctx).store)
    with state(ctx).views() as views:
        task_id = views.resolve("task", task) if task else None
        runs = views.runs(limit=limit, task_id=task_id, status=status.upper() if status else None)
        documents = [run_document(views, run) for run in runs]
    if as_json:
        emit_json(documents)
    elif not documents:
        out().print("no runs yet; start one with 'agentctl run start TASK'")
    else:
        from agentctl.cli.render.runs import run_table

        out().print(run_table(documents))


@app.command()
def show(
    ctx: typer.Context,
    run_id: RunArgument = None,
    tree: Annotated[bool, Flag("--tree", help="Attempts, steps, tool calls and artifacts."
                    )] = False,
    as_json: JsonOption = False,
) -> None:
    """Show a run (the newest without an id); --tree draws everything it did."""
    from agentctl.cli.documents import run_document
    from agentctl.cli.output import emit_json, out
    from agentctl.services.leftovers import notice_expired

    notice_expired(state(ctx).store)
    with state(ctx).views() as views:
        document = run_document(views, views.run(run_id), tree=tree)
    if as_json:
        emit_json(document)
        return
    from agentctl.cli.render import runs as render

    out().print(render.run_tree(document) if tree else render.run_detail(document))


@app.command()
def cancel(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or unique prefix.")],
    reason: Annotated[str, typer.Option("--reason", help="Why, for the audit trail.")] = "cancelled by user",
    by: Annotated[str | None, typer.Option("--by", metavar="WHO", help="Who cancels. (default: "
                  "the current user)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Cancel a run: a queued run at once, a running one by its worker within seconds."""
    from agentctl.cli.output import emit_json, out
    from agentctl.services.runs import cancel_run
    from agentctl.services.tasks import current_user

    run = cancel_run(state(ctx).store, run_id, by=by or current_user(), reason=reason)
    if as_json:
        emit_json(run)
    elif run.status.value == "CANCELLED":
        out().print(f"cancelled {run.run_id}")
    else:
        out().print(f"cancellation requested for {run.run_id} ({run.status.value}); its worker "
                    "stops it within seconds")


@app.command()
def report(
    ctx: typer.Context,
    run_id: RunArgument = None,
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help="swebench (SWE-bench's "
                   "report.json) or junit (JUnit XML of every check).")] = "swebench",
    output: Annotated[Path | None, typer.Option("--output", metavar="FILE", help="Write it "
                      "here instead of stdout.")] = None,
) -> None:
    """A run's verification for other tools: SWE-bench's report.json (tests by FAIL_TO_PASS,
    PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL) or JUnit XML of every check."""
    from agentctl.services.run_reports import run_report
    from agentctl.store.blobs import BlobStore

    current = state(ctx)
    with current.views() as views:
        text = run_report(views, BlobStore(current.home.artifacts), run_id, fmt.lower())
    if output is None:
        typer.echo(text, nl=False)
        return
    from agentctl.domain.errors import BadInput

    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise BadInput(f"cannot write {output}: {error.strerror or error}") from None
