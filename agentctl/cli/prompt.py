"""Interactive approval of `ask` tool calls at the terminal (`run start --interactive`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from agentctl.domain.command_rules import GuardDecision
from agentctl.domain.errors import BadInput
from agentctl.services.runtime import Approver


def terminal_approver() -> Approver:
    if not sys.stdin.isatty():
        raise BadInput("--interactive needs a terminal on stdin")
    from rich.prompt import Confirm

    from agentctl.cli.output import err
    from agentctl.services.tasks import current_user

    who = current_user()

    def approve(tool: str, arguments: Mapping[str, object], decision: GuardDecision) -> str | None:
        what = arguments.get("command") or arguments.get("path") or ""
        err().print(f"\n[bold]{tool}[/] [cyan]{what}[/] matches [yellow]{decision.matched_rule}[/]")
        if Confirm.ask("Allow this call?", console=err(), default=False):
            return who
        return None

    return approve
