"""`agentctl verdict`: the decision, its reasons and the evidence behind each link."""


import subprocess
import sys
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.documents import verdict_document
from agentctl.cli.options import Flag, FullOption, JsonOption, NoPagerOption, RunArgument
from agentctl.cli.output import emit_json, err, note, out
from agentctl.domain.enums import ApprovalDecision, RunStatus
from agentctl.domain.errors import BadInput, NotFound
from agentctl.store.blobs import BlobStore

app = typer.Typer(help="Verdicts: whether a run's patch is fit for a PR, and why.",
                  no_args_is_help=True)


def _load(ctx: typer.Context, run_id: str | None, *, explain: bool) -> dict:  # type: ignore[type-arg]

    current = state(ctx)
    with current.views() as views:
        run = views.run(run_id)
        document = verdict_document(views, run, explain=explain,
                                    files=BlobStore(current.home.artifacts) if explain else None)
    if document is None:
        raise NotFound(f"run {run.run_id} has no verdict yet (status {run.status.value})")
    return document


@app.command()
def show(ctx: typer.Context, run_id: RunArgument = None, full: FullOption = False,
         as_json: JsonOption = False) -> None:
    """Show a run's verdict: status, PR eligibility, reasons, evidence (by name and short hash;
    --full for whole hashes and paths)."""
    document = _load(ctx, run_id, explain=False)
    if as_json:
        emit_json(document)
        return
    from agentctl.cli.render.verdicts import verdict_panel

    out().print(verdict_panel(document, home=str(state(ctx).home.root), full=full))


@app.command()
def explain(ctx: typer.Context, run_id: RunArgument = None, full: FullOption = False,
            every: Annotated[bool, Flag("--all", help="Every test of each class and every "
                             "reason (default: the first few).")] = False,
            no_pager: NoPagerOption = False, as_json: JsonOption = False) -> None:
    """Walk the decision chain (boundary, apply, verification, judge, autonomy, eligibility,
    approvals) with the evidence artifact behind each link (`agentctl artifact show RUN NAME`
    prints one)."""
    document = _load(ctx, run_id, explain=True)
    if as_json:
        emit_json(document)
        return
    from agentctl.cli.pager import page, pager_command
    from agentctl.cli.render.verdicts import explanation

    shown = explanation(document, home=str(state(ctx).home.root), full=full, every=every)
    if pager_command(not no_pager) is None:
        out().print(shown)
        return
    with out().capture() as captured:
        out().print(shown)
    page(captured.get())


def _decide(ctx: typer.Context, run_id: str, decision: str, by: str, reason: str,
            as_json: bool) -> None:
    from agentctl.cli.render.style import escape
    from agentctl.services.actions.approvals import record_approval

    approval = record_approval(state(ctx).store, run_id, decision=ApprovalDecision(decision),
                               by=by, reason=reason)
    if as_json:
        emit_json(approval)
    else:
        out().print(f"{approval.decision.value} {approval.run_id} by {escape(approval.by)}")


ByOption = Annotated[str | None, typer.Option("--by", metavar="WHO", help="Who decides. "
                     "(default: git's user.name, else the current user)")]


def _decider(by: str | None) -> str:
    if by is not None:
        return by

    from agentctl.services.actions.tasks import current_user

    try:
        named = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        named = ""
    return named or current_user()
ReasonOption = Annotated[str | None, typer.Option(
    "--reason", metavar="TEXT", help="Why. (default: asked for at a terminal)")]
AwaitingRunArgument = Annotated[str | None, typer.Argument(
    metavar="[RUN]", help="Run id or unique prefix. (default: the newest run of the repository "
    "you stand in that awaits approval)")]


@app.command()
def approve(ctx: typer.Context, run_id: AwaitingRunArgument = None,
            reason: ReasonOption = None, by: ByOption = None, as_json: JsonOption = False) -> None:
    """Approve a verdict that awaits a human (NEEDS_APPROVAL); its reasons stay as they are."""
    chosen = run_id or _newest_awaiting(ctx)
    _decide(ctx, chosen, "APPROVED", _decider(by),
            reason or _asked_reason(ctx, "approve", chosen), as_json)


@app.command()
def reject(ctx: typer.Context,
           run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or prefix.")],
           reason: ReasonOption = None, by: ByOption = None, as_json: JsonOption = False) -> None:
    """Reject a verdict: no PR will be opened from this run."""
    _decide(ctx, run_id, "REJECTED", _decider(by),
            reason or _asked_reason(ctx, "reject", run_id), as_json)


def _newest_awaiting(ctx: typer.Context) -> str:
    """The newest run that awaits approval, of the repository you stand in (of any, outside
    one): what a reviewer who just read it means; named on stderr, so none is approved unseen."""

    with state(ctx).views() as views:
        waiting = views.runs(limit=1, status=RunStatus.NEEDS_APPROVAL,
                             repository=views.repository)
        where = f" of {views.repository}" if views.repository else ""
    if not waiting:
        raise NotFound(f"no run{where} awaits approval; name one (agentctl run list)")
    note(f"run {waiting[0].run_id} (#{waiting[0].number}), the newest{where} awaiting approval")
    return waiting[0].run_id


def _asked_reason(ctx: typer.Context, decision: str, run_text: str) -> str:
    """The reason, asked for on one line at a terminal (once the run is known to exist);
    without a terminal it must be given."""


    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise BadInput(f"{decision} needs --reason TEXT (no terminal to ask on)")
    with state(ctx).views() as views:
        run_id = views.resolve("run", run_text)
    from rich.prompt import Prompt

    from agentctl.cli.cancel import cancellable

    while True:
        with cancellable():
            answer = Prompt.ask(f"Why {decision} run {run_id}?", console=err()).strip()
        if answer:
            return answer
        err().print("[red]a reason is needed[/]")
