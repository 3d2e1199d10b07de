"""`agentctl verdict approve|reject`: a person's decision on a verdict that awaits one."""


import subprocess
import sys
from typing import Annotated

import typer
from rich.prompt import Prompt

from agentctl.cli.cancel import cancellable
from agentctl.cli.context import state
from agentctl.cli.options import JsonOption
from agentctl.cli.output import emit_json, err, note, out
from agentctl.cli.render.style import escape
from agentctl.domain.enums import ApprovalDecision, RunStatus
from agentctl.domain.errors import BadInput, NotFound
from agentctl.services.actions.approvals import record_approval
from agentctl.services.actions.tasks import current_user
from agentctl.store.run_views import RunViews


def _decide(ctx: typer.Context, run_id: str, decision: str, by: str, reason: str,
            as_json: bool) -> None:
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


def approve(ctx: typer.Context, run_id: AwaitingRunArgument = None,
            reason: ReasonOption = None, by: ByOption = None, as_json: JsonOption = False) -> None:
    """Approve a verdict that awaits a human (NEEDS_APPROVAL); its reasons stay as they are."""
    chosen = run_id or _newest_awaiting(ctx)
    _decide(ctx, chosen, "APPROVED", _decider(by),
            reason or _asked_reason(ctx, "approve", chosen), as_json)


def reject(ctx: typer.Context,
           run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or prefix.")],
           reason: ReasonOption = None, by: ByOption = None, as_json: JsonOption = False) -> None:
    """Reject a verdict: no PR will be opened from this run."""
    _decide(ctx, run_id, "REJECTED", _decider(by),
            reason or _asked_reason(ctx, "reject", run_id), as_json)


def _newest_awaiting(ctx: typer.Context) -> str:
    """The newest run that awaits approval, of the repository you stand in (of any, outside
    one): what a reviewer who just read it means; named on stderr, so none is approved unseen."""
    with state(ctx).views(RunViews) as views:
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
    with state(ctx).views(RunViews) as views:
        run_id = views.resolve("run", run_text)
    while True:
        with cancellable():
            answer = Prompt.ask(f"Why {decision} run {run_id}?", console=err()).strip()
        if answer:
            return answer
        err().print("[red]a reason is needed[/]")
