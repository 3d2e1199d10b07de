"""The root help: user commands first, plumbing (what agents and operators call) apart."""

from __future__ import annotations

from agentctl._speedups.typer_click import Context, HelpFormatter
from agentctl.cli.lazy import LazyGroup

# Called by agents' hooks, MCP clients and operators, rarely typed by a person.
PLUMBING = frozenset({"hook", "mcp", "db"})


class SectionedGroup(LazyGroup):
    """A lazy command group whose help lists plumbing commands in a section of their own, from
    each command's stored summary: `agentctl --help` imports no command's module."""

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        shown = self.listed(ctx, formatter)
        for title, plumbing in (("Commands", False), ("Plumbing commands", True)):
            rows = [(name, text) for name, text in shown if (name in PLUMBING) is plumbing]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
