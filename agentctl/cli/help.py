"""The root help: user commands first, plumbing (what agents and operators call) apart."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typer.core import TyperGroup

if TYPE_CHECKING:  # Typer carries its own copy of click
    from typer._click import Context, HelpFormatter

# Called by agents' hooks, MCP clients and operators, rarely typed by a person.
PLUMBING = frozenset({"hook", "mcp", "db"})


class SectionedGroup(TyperGroup):
    """A command group whose help lists plumbing commands in a section of their own."""

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        found = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        shown = [(name, command) for name, command in found
                 if command is not None and not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        for title, plumbing in (("Commands", False), ("Plumbing commands", True)):
            rows = [(name, command.get_short_help_str(limit)) for name, command in shown
                    if (name in PLUMBING) is plumbing]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
