"""The state home's caches, seen and cleared: the checked-out bases (`trees/`), the base's check
results (`baselines/`) and the base checkouts kept beside them (`baselines/checkouts/`).
None needs the store, and reading creates nothing, so a home that does not exist yet shows
empty caches and stays absent.

Clearing is safe with workers running: a tree entry a live run pins stays (and is reported as
kept), the others go the way eviction removes them, and so do the half-built or half-removed
ones dead workers left in `trees/tmp/`; a kept base checkout is claimed as an
attempt claims one before it is deleted (one an attempt holds is not kept, so not listed); a
cleared baseline is run again by the next run on its base.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentctl.execution.workspaces import kept_checkouts, tree_cache
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.services.attempts.baseline_cache import FOLDER as BASELINES
from agentctl.services.attempts.baseline_cache import BaselineCache, Usage

TREES_BOUND_KEY = "store.tree_cache_mb"  # the config key that bounds `trees/` (0: no cache)


@dataclass(frozen=True, slots=True)
class TreesState:
    folder: Path
    usage: Usage
    pinned: int  # entries a live run holds right now
    bound_mb: int  # `[store] tree_cache_mb`; 0 switches the cache off
    leftovers: Usage  # in `tmp/`: what builders and removers that died left

    @property
    def bound_bytes(self) -> int:
        return self.bound_mb * 2**20


@dataclass(frozen=True, slots=True)
class BaselinesState:
    folder: Path
    usage: Usage
    checkouts: Usage  # kept in `checkouts/` for reruns on the base

    @property
    def checkouts_folder(self) -> Path:
        return self.folder / kept_checkouts.FOLDER


@dataclass(frozen=True, slots=True)
class CachesState:
    trees: TreesState
    baselines: BaselinesState


@dataclass(frozen=True, slots=True)
class TreesCleared:
    folder: Path
    removed: Usage
    kept: Usage  # pinned by a live run
    leftovers: Usage  # removed from `tmp/`


@dataclass(frozen=True, slots=True)
class BaselinesCleared:
    folder: Path
    removed: Usage
    checkouts_removed: Usage

    @property
    def checkouts_folder(self) -> Path:
        return self.folder / kept_checkouts.FOLDER


@dataclass(frozen=True, slots=True)
class CachesCleared:
    trees: TreesCleared | None  # None: not asked to clear it
    baselines: BaselinesCleared | None


def show_caches(home: Path, tree_cache_mb: int) -> CachesState:
    """Entries and bytes on disk of each cache of the home at `home`; how many tree entries
    live runs pin right now."""
    trees = _trees(home, tree_cache_mb)
    entries = tree_cache.entries(trees)
    pinned = sum(1 for entry in entries if tree_cache.is_pinned(trees, entry.key))
    return CachesState(
        trees=TreesState(trees.root, _usage(entries), pinned, tree_cache_mb,
                         _usage(tree_cache.leftovers(trees))),
        baselines=BaselinesState(home / BASELINES,
                                 BaselineCache(home / BASELINES).usage(),
                                 _measured(kept_checkouts.kept(_checkouts(home)))))


def clear_caches(home: Path, tree_cache_mb: int, *, trees: bool,
                 baselines: bool) -> CachesCleared:
    """Remove every tree entry no live run pins (`trees`) and every baseline (`baselines`)."""
    trees_cleared = baselines_cleared = None
    if trees:
        cache = _trees(home, tree_cache_mb)
        cleared = tree_cache.clear(cache)
        trees_cleared = TreesCleared(cache.root, _usage(cleared.removed), _usage(cleared.kept),
                                     _usage(cleared.leftovers))
    if baselines:
        folder = home / BASELINES
        removed = BaselineCache(folder).clear()
        discarded = [(path, size) for path, size in _sizes(kept_checkouts.kept(_checkouts(home)))
                     if kept_checkouts.discard(path)]
        baselines_cleared = BaselinesCleared(
            folder, removed, Usage(len(discarded), sum(size for _, size in discarded)))
    return CachesCleared(trees_cleared, baselines_cleared)


def runs_tree_cache(home: Path, tree_cache_mb: int) -> TreeCache | None:
    """The tree cache the runs of the home at `home` share; None when it is switched off."""
    return tree_cache.in_home(home, tree_cache_mb)


def _trees(home: Path, tree_cache_mb: int) -> TreeCache:
    """The home's tree cache, switched off or not: entries left from when it was on count."""
    return TreeCache(home / tree_cache.FOLDER, tree_cache_mb * 2**20)


def _checkouts(home: Path) -> Path:
    return home / BASELINES / kept_checkouts.FOLDER


def _sizes(paths: list[Path]) -> list[tuple[Path, int]]:
    """Each folder with its bytes on disk (a checkout taken meanwhile counts what is left)."""
    return [(path, tree_cache.disk_usage(path)) for path in paths]


def _measured(paths: list[Path]) -> Usage:
    return Usage(len(paths), tree_cache.disk_usage(*paths) if paths else 0)


def _usage(entries: Sequence[tree_cache.Entry]) -> Usage:
    return Usage(len(entries), sum(entry.size for entry in entries))
