"""`agentctl run`: start, list, show and cancel runs."""


import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.cli.artifact import artifact_content, named_artifact, print_artifact
from agentctl.cli.context import State, state
from agentctl.cli.options import (
    MAX_LIMIT,
    Flag,
    FullOption,
    JsonOption,
    NoPagerOption,
    RepoOption,
    RunArgument,
)
from agentctl.cli.output import emit_json, hint, live_status, note, out
from agentctl.cli.sandbox import unsandboxed, warn_unsandboxed
from agentctl.domain.enums import RunStatus, VerdictStatus
from agentctl.domain.errors import BadInput
from agentctl.store.blobs import BlobStore

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
        "claude[:MODEL], codex[:MODEL], script:PLAN.toml, patch:FILE.diff, command:CMD or "
        "noop. (default: agent.default)"))] = None,
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
    from agentctl.domain.verdict import exit_code_for
    from agentctl.execution.tree_cache import in_home
    from agentctl.services.leftovers import notice_expired
    from agentctl.services.pipeline import RunOptions
    from agentctl.services.telemetry import configured_endpoint, trace_after_run
    from agentctl.services.worker import start_run

    if interactive:
        from agentctl.cli.prompt import check_terminal

        if detach:
            raise BadInput("--interactive needs the run to execute here; drop --detach")
        check_terminal()
    config = unsandboxed(current.config, no_sandbox)
    _warn_uncommitted(current, task_id)
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
                             # a kept workspace outlives the run: its own checkout, not a view
                             tree_cache=None if keep_workspace else in_home(
                                 current.home.root, config.store.tree_cache_mb),
                             protected=(current.home.root,), observer=progress,
                             trace_endpoint=configured_endpoint(config))
        try:
            run = start_run(current.store, config, task_id, agent=agent, detach=detach,
                            options=options)
        except KeyboardInterrupt:  # the run ended CANCELLED on record; say which, then 130
            _say_cancelled(current, task_id)
            raise typer.Exit(130) from None
    warn_unsandboxed(config)
    if not detach:
        trace_after_run(current.store, config, run)  # after the verdict: never on the run's path
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
        hint("a worker executes it: agentctl worker --once")
        return 0
    verdict = document["verdict"]
    return exit_code_for(VerdictStatus(verdict["status"]) if verdict else None)


@app.command()
def replay(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or unique prefix.")],
    config_file: Annotated[Path | None, typer.Option("--config", metavar="FILE", help=(
        "A what-if: replay under this config's policy and list every decision that "
        "changed."))] = None,
    as_json: JsonOption = False,
) -> None:
    """Run a recorded claude/codex run again, its model answering from the recorded exchanges
    (no model, no key): the same task, base commit and agent CLI. Says whether the replay is
    identical (tool calls, decisions, patch tree); exit 1 when it is not."""
    from agentctl import config as configs
    from agentctl.cli.artifact import artifact_content
    from agentctl.cli.output import emit_json, live_status, out
    from agentctl.services.pipeline import RunOptions
    from agentctl.services.replay import replay_run

    current = state(ctx)
    what_if = configs.load(config_file) if config_file is not None else None
    root = current.home.artifacts
    import signal  # SIGTERM stops a replay as Ctrl-C does: it ends CANCELLED, on record

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with live_status(f"replay of {run_id}") as progress:
        options = RunOptions(progress=progress, observer=progress,
                             redact_logs_up_to=current.config.verification.redact_logs_up_to_bytes,
                             protected=(current.home.root,))
        report = replay_run(current.store, current.config, run_id, what_if=what_if,
                            options=options,
                            read=lambda a: b"".join(artifact_content(root, a)))
    document = {**_document(current, report.run), "replayOf": report.replay_of,
                "identical": report.identical, "differences": list(report.differences),
                "requestsRecorded": report.requests_recorded,
                "requestsReplayed": report.requests_replayed,
                "decisionChanges": [{"step": c.step, "tool": c.tool, "before": c.before,
                                     "after": c.after, "rule": c.rule}
                                    for c in report.decision_changes]}
    if as_json:
        emit_json(document)
    else:
        console = out()
        console.print(f"{report.run.run_id} replays {report.replay_of}: "
                      f"{report.requests_replayed}/{report.requests_recorded} model requests "
                      f"answered from the record; "
                      + ("identical" if report.identical else "DIFFERENT"), markup=False,
                      highlight=False)
        for change in report.decision_changes:
            console.print(f"  call {change.step} {change.tool}: {change.before} -> "
                          f"{change.after} ({change.rule})", markup=False, highlight=False)
        for difference in report.differences:
            console.print(f"  {difference}", markup=False, highlight=False)
    raise typer.Exit(0 if report.identical else 1)


def _warn_uncommitted(current: State, task_text: str) -> None:
    """A run starts from the base ref's commit: say so when the checkout holds changes to
    tracked files that the run will not see."""
    from agentctl.execution.repository import is_url

    with current.views() as views:
        task = views.task(task_text)
    if not task.repository or is_url(task.repository) or not Path(task.repository).is_dir():
        return

    try:
        changed = subprocess.run(
            ["git", "-C", task.repository, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    if changed:
        count = len(changed.splitlines())
        note(f"agentctl: warning: {task.repository} has uncommitted changes ({count} "
             f"file{'s' if count != 1 else ''}); the run works on {task.base_ref} as committed "
             "and will not see them")


def _say_cancelled(current: State, task_text: str) -> None:
    with current.views() as views:
        task = views.task(task_text)
        runs = views.runs(limit=1, task_id=task.task_id)
    what = f"run {runs[0].run_id}" if runs else f"the run of {task.task_id}"
    note(f"agentctl: {what} cancelled")


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
    repo: RepoOption = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_LIMIT,
                                       help="At most this many, newest first.")] = 50,
    full: FullOption = False,
    as_json: JsonOption = False,
) -> None:
    """List runs, newest first, with their verdicts."""
    from agentctl.cli.documents import run_document
    from agentctl.services.leftovers import notice_expired

    if status is not None and status.upper() not in RunStatus.__members__:
        raise BadInput(f"unknown run status {status!r}; expected one of: "
                       f"{', '.join(RunStatus.__members__)}")
    current = state(ctx)
    notice_expired(current.store)
    repository = current.repository_filter(repo)
    with current.views() as views:
        task_id = views.resolve("task", task) if task else None
        runs = views.runs(limit=limit, task_id=task_id, status=status.upper() if status else None,
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
        from agentctl.cli.render.runs import run_table

        out().print(run_table(documents, short=short, repositories=repositories,
                              width=out().width))


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
def diff(
    ctx: typer.Context,
    run_id: RunArgument = None,
    no_pager: NoPagerOption = False,
) -> None:
    """Print a run's patch (patch.diff, verified by its hash), coloured on a terminal."""
    current = state(ctx)
    with current.views() as views:
        artifact = named_artifact(views, run_id, "patch.diff")
    console = out()
    if not console.is_terminal:
        print_artifact(current.home.artifacts, artifact)
        return
    from agentctl.cli.pager import page
    from agentctl.cli.render.diff import coloured
    from agentctl.cli.render.style import printable

    content = b"".join(artifact_content(current.home.artifacts, artifact))
    text = content.decode("utf-8", errors="replace")
    page(printable(text) if console.no_color or console.color_system is None
         else coloured(text),
         enabled=not no_pager)


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
                   "report.json), junit (JUnit XML of every check), html (the run page), ctrf "
                   "(Common Test Report Format) or atif (agent trajectory).")] = "swebench",
    output: Annotated[Path | None, typer.Option("--output", metavar="FILE", help="Write it "
                      "here instead of stdout.")] = None,
    public: Annotated[bool, Flag("--public", help="html, ctrf, atif: keep only "
                      "SAFE_FOR_PUBLIC_LOG content.")] = False,
) -> None:
    """A run for other tools and people: SWE-bench's report.json, JUnit XML, a self-contained
    HTML page, CTRF or ATIF."""
    from agentctl.cli.reports import PAGE_FORMATS, page_report
    from agentctl.services.run_reports import run_report

    current = state(ctx)
    fmt = fmt.lower()
    if public and fmt not in PAGE_FORMATS:
        from agentctl.domain.errors import BadInput

        raise BadInput(f"--public applies to --format {', '.join(PAGE_FORMATS)}, not {fmt}")
    with current.views() as views:
        blobs = BlobStore(current.home.artifacts)
        text = page_report(views, blobs, run_id, fmt, public=public) if fmt in PAGE_FORMATS \
            else run_report(views, blobs, run_id, fmt)
    if output is None:
        typer.echo(text, nl=False)
        return
    from agentctl.cli.reports import write_report

    write_report(output, text)


@app.command()
def attest(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or unique prefix.")],
    output: Annotated[Path | None, typer.Option("--output", metavar="FILE", help="Write the "
                      "bundle here instead of stdout.")] = None,
    key: Annotated[Path | None, typer.Option("--key", metavar="FILE", help="Sign with this "
                   "ed25519 PEM private key. (default: the state home's, made on first "
                   "use)")] = None,
) -> None:
    """What the run proved, as signed in-toto Statements: JSON lines of DSSE envelopes (SLSA
    provenance, a test-result per check, agentctl's run predicate) about the patch and its tree.
    Check it with `agentctl attest verify` or any in-toto tool."""
    from agentctl.cli.reports import write_report
    from agentctl.services.attest import attest_run

    text = attest_run(state(ctx).store, run_id, key=key)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_report(output, text)


@app.command("open")
def open_(
    ctx: typer.Context,
    run_id: RunArgument = None,
    public: Annotated[bool, Flag("--public", help="Keep only SAFE_FOR_PUBLIC_LOG content."
                      )] = False,
) -> None:
    """Write the run page (the newest run without an id) to a temporary file and open it in
    the browser; the file's path goes to stdout."""
    from agentctl.cli.reports import open_page

    current = state(ctx)
    with current.views() as views:
        path, opened = open_page(views, current.home.artifacts, run_id, public=public)
    typer.echo(str(path))
    if not opened:
        from agentctl.cli.output import note

        note("no browser found here; open the file above in one")


@app.command()
def trace(
    ctx: typer.Context,
    run_id: RunArgument = None,
    endpoint: Annotated[str | None, typer.Option("--endpoint", metavar="URL", help="OTLP/HTTP "
                        "endpoint. (default: OTEL_EXPORTER_OTLP_ENDPOINT, then "
                        "[telemetry] otlp_endpoint)")] = None,
) -> None:
    """Export a finished run as one OpenTelemetry trace over OTLP/HTTP."""
    from agentctl.services.telemetry import export_finished_run

    current = state(ctx)
    result = export_finished_run(current.store, current.config, run_id, endpoint=endpoint)
    if result.error:
        from agentctl.domain.errors import InfrastructureFailure

        raise InfrastructureFailure(f"trace {result.trace_id} not sent: {result.error}")
    note(f"trace {result.trace_id}: {result.exported} spans sent to {result.endpoint}"
         + (f", {result.dropped} dropped" if result.dropped else ""))
