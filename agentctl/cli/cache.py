"""`agentctl cache show|clear`: the state home's caches, without the store (no ORM, no database)."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag, JsonOption
from agentctl.cli.output import emit_json, out
from agentctl.cli.render.caches import caches_table, cleared_lines, leftovers_line
from agentctl.services.admin.caches import (
    TREES_BOUND_KEY,
    CachesCleared,
    CachesState,
    clear_caches,
    show_caches,
)
from agentctl.services.attempts.baseline_cache import Usage

app = typer.Typer(help="The state home's caches: checked-out bases and baselines.\n\n"
                  "trees/ holds one checkout per (repository, base commit), bounded by [store] "
                  "tree_cache_mb; baselines/ the base's check results per (repository, base "
                  "commit, command, environment).", no_args_is_help=True)


@app.command()
def show(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Show each cache's folder, entries and bytes on disk.

    For trees also the size bound (the config key and its value) and how many entries live
    runs are using right now; beside the baselines, the clean checkouts of the base kept for
    reruns there (where the trees cannot be mounted as views). Creates nothing, not even the
    home."""
    current = state(ctx)
    caches = show_caches(current.home.root, current.config.store.tree_cache_mb)
    if as_json:
        emit_json(_shown(caches))
    else:
        out().print(caches_table(caches, width=out().width))
        if caches.trees.leftovers.entries:
            out().print(leftovers_line(caches.trees.leftovers), highlight=False, markup=False)


@app.command()
def clear(
    ctx: typer.Context,
    trees: Annotated[bool, Flag("--trees", help="Clear the checked-out bases.")] = False,
    baselines: Annotated[bool, Flag("--baselines", help="Clear the base's check results "
                                    "(and the base checkouts kept beside them).")] = False,
    as_json: JsonOption = False,
) -> None:
    """Remove the cached trees not in use and every cached baseline.

    Both caches unless --trees or --baselines names one. Safe with workers running: a tree a
    live run is using is kept (and reported); a cleared baseline is run again by the next run
    on its base."""
    both = not trees and not baselines
    current = state(ctx)
    cleared = clear_caches(current.home.root, current.config.store.tree_cache_mb,
                           trees=trees or both, baselines=baselines or both)
    if as_json:
        emit_json(_cleared(cleared))
    else:
        for line in cleared_lines(cleared):
            out().print(line, highlight=False, markup=False)


def _shown(caches: CachesState) -> dict[str, object]:
    trees, baselines = caches.trees, caches.baselines
    return {
        "trees": {"folder": str(trees.folder), **_usage(trees.usage), "pinned": trees.pinned,
                  "enabled": trees.bound_mb > 0, "leftovers": _usage(trees.leftovers),
                  "bound": {"configKey": TREES_BOUND_KEY, "value": trees.bound_mb,
                            "sizeBytes": trees.bound_bytes}},
        "baselines": {"folder": str(baselines.folder), **_usage(baselines.usage),
                      "checkouts": {"folder": str(baselines.checkouts_folder),
                                    **_usage(baselines.checkouts)}},
    }


def _cleared(cleared: CachesCleared) -> dict[str, object]:
    trees, baselines = cleared.trees, cleared.baselines
    return {
        "trees": None if trees is None else {
            "folder": str(trees.folder), "removed": _usage(trees.removed),
            "kept": _usage(trees.kept), "leftovers": _usage(trees.leftovers)},
        "baselines": None if baselines is None else {
            "folder": str(baselines.folder), "removed": _usage(baselines.removed),
            "checkouts": {"folder": str(baselines.checkouts_folder),
                          "removed": _usage(baselines.checkouts_removed)}},
    }


def _usage(usage: Usage) -> dict[str, int]:
    return {"entries": usage.entries, "sizeBytes": usage.size}
