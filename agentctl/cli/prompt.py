"""Interactive approval of `ask` tool calls at the terminal (`run start --interactive`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager

from rich.prompt import Confirm

from agentctl.cli.cancel import new_line_on_interrupt
from agentctl.cli.output import err
from agentctl.cli.render.style import escape
from agentctl.domain.errors import BadInput
from agentctl.services.actions.tasks import current_user
from agentctl.services.ports import ApprovalQuestion, Approver


def check_terminal() -> None:
    if not sys.stdin.isatty():
        raise BadInput("--interactive needs a terminal on stdin")


def terminal_approver(pause: Callable[[], AbstractContextManager[None]]) -> Approver:
    """Ask at the terminal; `pause` hides the live status while the question waits."""
    check_terminal()


    who = current_user()

    def approve(question: ApprovalQuestion) -> str | None:
        arguments = question.arguments
        what = arguments.get("command") or arguments.get("path") or ""
        with pause():
            err().print(f"\n[dim]run {question.run_id} · step {question.step}[/]\n"
                        f"[bold]{escape(question.tool)}[/] [cyan]{escape(str(what))}[/] "
                        f"matches [yellow]{escape(str(question.decision.matched_rule))}[/]")
            with new_line_on_interrupt():  # the run is cancelled on record by its caller
                allowed = Confirm.ask("Allow this call?", console=err(), default=False)
        return who if allowed else None

    return approve
