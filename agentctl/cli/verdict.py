"""`agentctl verdict`: the decision, its reasons and the evidence behind each link."""

from __future__ import annotations

from typing import Annotated

import typer

from agentctl.cli.context import state

app = typer.Typer(help="Verdicts: whether a run's patch is fit for a PR, and why.",
                  no_args_is_help=True)
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
RunArgument = Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id or unique "
                        "prefix. (default: the newest run)")]


def _load(ctx: typer.Context, run_id: str | None, *, explain: bool) -> dict:  # type: ignore[type-arg]
    from agentctl.cli.documents import verdict_document
    from agentctl.domain.errors import NotFound

    with state(ctx).views() as views:
        run = views.run(run_id)
        document = verdict_document(views, run, explain=explain)
    if document is None:
        raise NotFound(f"run {run.run_id} has no verdict yet (status {run.status.value})")
    return document


@app.command()
def show(ctx: typer.Context, run_id: RunArgument = None, as_json: JsonOption = False) -> None:
    """Show a run's verdict: status, PR eligibility, reasons, evidence."""
    from agentctl.cli.output import emit_json, out

    document = _load(ctx, run_id, explain=False)
    if as_json:
        emit_json(document)
        return
    from agentctl.cli.render.verdicts import verdict_panel

    out().print(verdict_panel(document, home=str(state(ctx).home.root)))


@app.command()
def explain(ctx: typer.Context, run_id: RunArgument = None, as_json: JsonOption = False) -> None:
    """Walk the decision chain (boundary, apply, verification, judge, autonomy, eligibility,
    approvals) with the evidence artifact behind each link."""
    from agentctl.cli.output import emit_json, out

    document = _load(ctx, run_id, explain=True)
    if as_json:
        emit_json(document)
        return
    from agentctl.cli.render.verdicts import explanation

    out().print(explanation(document, home=str(state(ctx).home.root)))
