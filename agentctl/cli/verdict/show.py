"""`agentctl verdict show|explain`: the decision, its reasons and the evidence behind each
link."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.documents import verdict_document
from agentctl.cli.options import Flag, FullOption, JsonOption, NoPagerOption, RunArgument
from agentctl.cli.output import emit_json, out
from agentctl.cli.pager import page, pager_command
from agentctl.domain.errors import NotFound
from agentctl.store.blobs import BlobStore
from agentctl.store.views import Views


def _load(ctx: typer.Context, run_id: str | None, *, explain: bool) -> dict:  # type: ignore[type-arg]
    current = state(ctx)
    with current.views(Views) as views:
        run = views.run(run_id)
        document = verdict_document(views, run, explain=explain,
                                    files=BlobStore(current.home.artifacts) if explain else None)
    if document is None:
        raise NotFound(f"run {run.run_id} has no verdict yet (status {run.status.value})")
    return document


def show(ctx: typer.Context, run_id: RunArgument = None, full: FullOption = False,
         as_json: JsonOption = False) -> None:
    """Show a run's verdict: status, PR eligibility, reasons, evidence (by name and short hash;
    --full for whole hashes and paths)."""
    document = _load(ctx, run_id, explain=False)
    if as_json:
        emit_json(document)
        return
    _print_text(document, home=str(state(ctx).home.root), full=full)


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
    _print_text(document, home=str(state(ctx).home.root), full=full, explain=True,
                every=every, paged=pager_command(not no_pager) is not None)


def _print_text(document: dict, *, home: str, full: bool,  # type: ignore[type-arg]
                explain: bool = False, every: bool = False, paged: bool = False) -> None:
    """The verdict as text: its panel, or (`explain`) its decision chain, paged or not. Rich's
    renderers are imported here, the text path's one door: --json needs none."""
    from agentctl.cli.render.verdicts import explanation, verdict_panel

    if not explain:
        out().print(verdict_panel(document, home=home, full=full))
        return
    shown = explanation(document, home=home, full=full, every=every)
    if not paged:
        out().print(shown)
        return
    with out().capture() as captured:
        out().print(shown)
    page(captured.get())
