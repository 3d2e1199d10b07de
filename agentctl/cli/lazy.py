"""A command group that imports a sub-command's module only when that sub-command runs.

Click's documented `LazyGroup` pattern: the root knows each command's name, module and first
help paragraph, so `agentctl --help` lists them without importing any, and `agentctl task list`
imports the `task` group and `cli/task/show.py` alone: the groups (`run`, `task`, `verdict`) are
lazy in turn, so a read command never loads a write command's module. The cli modules can then
import what they use at the top.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperGroup

from agentctl._speedups.typer_click import (
    Command,
    Context,
    HelpFormatter,
    make_default_short_help,
)


@dataclass(frozen=True)
class Lazy:
    """Where a sub-command lives: `module:attribute`, a `typer.Typer` (a group) or a function
    (a command), and its help's first paragraph, shown in the root help without an import."""

    target: str
    summary: str
    context_settings: dict[str, Any] | None = None


class LazyGroup(TyperGroup):
    """A Typer group whose `lazy` commands are built from their module on first use."""

    lazy: dict[str, Lazy] = {}

    def list_commands(self, ctx: Context) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in self.lazy if n not in self.commands)]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.commands[cmd_name] = self._load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def listed_help(self, name: str, limit: int) -> str | None:
        """The help a listing shows for `name` (None when hidden), without importing it."""
        if (command := self.commands.get(name)) is not None:
            return None if command.hidden else command.get_short_help_str(limit)
        return make_default_short_help(self.lazy[name].summary, limit)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The group's help lists its commands from their stored summaries, importing none."""
        if rows := self.listed(ctx, formatter):
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def listed(self, ctx: Context, formatter: HelpFormatter) -> list[tuple[str, str]]:
        """Each shown command and its help, as Click's listing lays them out."""
        names = self.list_commands(ctx)
        if not names:
            return []
        limit = formatter.width - 6 - max(len(name) for name in names)
        return [(name, text) for name in names
                if (text := self.listed_help(name, limit)) is not None]

    def _load(self, name: str) -> Command:
        """The command as Typer would have built it had it been registered on the root."""
        entry = self.lazy[name]
        module, _, attribute = entry.target.partition(":")
        target = getattr(importlib.import_module(module), attribute)
        holder = typer.Typer(rich_markup_mode=self.rich_markup_mode,
                             suggest_commands=self.suggest_commands)
        if isinstance(target, typer.Typer):
            holder.add_typer(target, name=name)
        else:
            holder.command(name, context_settings=entry.context_settings)(target)
        return typer.main.get_group(holder).commands[name]
