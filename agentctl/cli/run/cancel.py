"""`agentctl run cancel`: a queued run at once, a running one through its worker."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import CancelledByOption, CancelReasonOption, JsonOption
from agentctl.cli.output import emit_json, out
from agentctl.domain.run import BEFORE_PR, cancelled_before_pr
from agentctl.services.actions.tasks import current_user
from agentctl.services.lifecycle.runs import cancel_run
from agentctl.store.run_views import RunViews


def cancel(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or unique prefix.")],
    reason: CancelReasonOption = "cancelled by user",
    by: CancelledByOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cancel a run: a queued run at once, a running one by its worker within seconds."""

    current = state(ctx)
    run = cancel_run(current.store, run_id, by=by or current_user(), reason=reason)
    if as_json:
        emit_json(run)
    elif run.status.value == "CANCELLED":
        with current.views(RunViews) as views:
            verdict = views.verdict(run.run_id)
        if verdict is not None and cancelled_before_pr(run.status.value, verdict.status.value):
            out().print(f"cancelled {run.run_id} {BEFORE_PR} (its verdict: "
                        f"{verdict.status.value})", markup=False)
        else:
            out().print(f"cancelled {run.run_id}")
    else:
        out().print(f"cancellation requested for {run.run_id} ({run.status.value}); its worker "
                    "stops it within seconds")
