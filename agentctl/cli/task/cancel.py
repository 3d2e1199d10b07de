"""`agentctl task cancel`: stop a task and its queued and running runs."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import CancelledByOption, CancelReasonOption, JsonOption
from agentctl.cli.output import emit_json, out
from agentctl.services.actions.tasks import cancel_task, current_user


def cancel(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Argument(metavar="TASK", help="Task id or unique prefix.")],
    reason: CancelReasonOption = "cancelled by user",
    by: CancelledByOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cancel a task: no new run is scheduled; its queued and running runs are cancelled."""
    task = cancel_task(state(ctx).store, task_id, by=by or current_user(), reason=reason)
    if as_json:
        emit_json(task)
    else:
        out().print(f"cancelled {task.task_id}")
