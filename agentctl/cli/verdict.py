"""`agentctl verdict`: the decision, its reasons and the evidence behind each link."""


import subprocess
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag, FullOption, JsonOption, NoPagerOption, RunArgument
from agentctl.cli.output import emit_json, out
from agentctl.domain.enums import ApprovalDecision
from agentctl.domain.errors import NotFound

app = typer.Typer(help="Verdicts: whether a run's patch is fit for a PR, and why.",
                  no_args_is_help=True)


def _load(ctx: typer.Context, run_id: str | None, *, explain: bool) -> dict:  # type: ignore[type-arg]
    from agentctl.cli.documents import verdict_document
    from agentctl.store.blobs import BlobStore

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
ReasonOption = Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why.")]


@app.command()
def approve(ctx: typer.Context,
            run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or prefix.")],
            reason: ReasonOption, by: ByOption = None, as_json: JsonOption = False) -> None:
    """Approve a verdict that awaits a human (NEEDS_APPROVAL); its reasons stay as they are."""
    _decide(ctx, run_id, "APPROVED", _decider(by), reason, as_json)


@app.command()
def reject(ctx: typer.Context,
           run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or prefix.")],
           reason: ReasonOption, by: ByOption = None, as_json: JsonOption = False) -> None:
    """Reject a verdict: no PR will be opened from this run."""
    _decide(ctx, run_id, "REJECTED", _decider(by), reason, as_json)
