"""The state home's caches for people: what each holds, and what clearing removed and kept."""

from __future__ import annotations

from rich.console import RenderableType
from rich.filesize import decimal

from agentctl.cli.render.fit import Column, fitted
from agentctl.cli.render.style import escape
from agentctl.services.admin.caches import TREES_BOUND_KEY, CachesCleared, CachesState
from agentctl.services.attempts.baseline_cache import Usage


def caches_table(caches: CachesState, *, width: int) -> RenderableType:
    """One row per cache (the base checkouts kept beside the baselines too); its folder on a
    line of its own when the row is too wide for it."""
    trees, baselines = caches.trees, caches.baselines
    bound = f"{_key()} = {trees.bound_mb}" + ("" if trees.bound_mb else " (off)")
    columns = [Column("CACHE", 3), Column("ENTRIES", 3), Column("SIZE", 3), Column("PINNED", 2),
               Column("BOUND", 1), Column("FOLDER", text=True)]
    rows = [["trees", str(trees.usage.entries), decimal(trees.usage.size), str(trees.pinned),
             bound, escape(trees.folder)],
            ["baselines", str(baselines.usage.entries), decimal(baselines.usage.size), "-", "-",
             escape(baselines.folder)],
            ["checkouts", str(baselines.checkouts.entries), decimal(baselines.checkouts.size),
             "-", "-", escape(baselines.checkouts_folder)]]
    return fitted(columns, rows, width)


def cleared_lines(cleared: CachesCleared) -> list[str]:
    """A line per cache cleared: what went, and what stayed because a live run uses it."""
    lines = []
    if cleared.trees is not None:
        line = f"trees      removed {_count(cleared.trees.removed)}"
        if cleared.trees.kept.entries:
            line += f"; kept {_count(cleared.trees.kept)}, in use by a live run"
        lines.append(line)
        if cleared.trees.leftovers.entries:
            lines.append(f"           and {_leftovers(cleared.trees.leftovers)} dead workers "
                         "left in tmp/")
    if cleared.baselines is not None:
        lines.append(f"baselines  removed {_count(cleared.baselines.removed)}")
        if cleared.baselines.checkouts_removed.entries:
            lines.append(f"checkouts  removed {_count(cleared.baselines.checkouts_removed)}")
    return lines


def leftovers_line(usage: Usage) -> str:
    """Under the table: what dead workers left in `trees/tmp/`, and how to get it back."""
    return (f"trees/tmp/ holds {_leftovers(usage)} dead workers left: "
            "'agentctl cache clear --trees' removes them")


def _leftovers(usage: Usage) -> str:
    noun = "checkout" if usage.entries == 1 else "checkouts"
    return f"{usage.entries} unfinished {noun} ({decimal(usage.size)})"


def _count(usage: Usage) -> str:
    noun = "entry" if usage.entries == 1 else "entries"
    return f"{usage.entries} {noun} ({decimal(usage.size)})"


def _key() -> str:
    section, _, name = TREES_BOUND_KEY.partition(".")
    return escape(f"[{section}] {name}")
