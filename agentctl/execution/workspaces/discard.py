"""An attempt's directory let go of: its views unmounted, its hold on a tree cache entry
released, and the folder deleted, at once or out of the way in the background (renamed to
trash for a detached low-priority process), or later by a sweep as a dead attempt's leftover.

Kept apart from making workspaces (`workspace`) because every way an attempt ends comes here:
the worker's clean-up, the reaper's reclaim of a dead attempt, the sweep of a machine's
leftovers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.workspaces.overlay import mounts_under, unmount_under
from agentctl.execution.workspaces.removal import force_rmtree
from agentctl.execution.workspaces.trash import TRASH_PREFIX, collect, spawn_deleter
from agentctl.execution.workspaces.tree_cache import PinnedEntry

ATTEMPT_DIR_PREFIX = "agentctl-ws-"

# Attempts whose trees are views of a cache entry, and the entry's pin, released (and the views
# unmounted) when the attempt's directory is removed.
_HELD: dict[Path, PinnedEntry] = {}


def hold(root: Path, entry: PinnedEntry) -> None:
    """The attempt at `root` holds `entry` (its trees are views of it) until it is let go of."""
    _HELD[root] = entry


def held(root: Path) -> PinnedEntry | None:
    """The cache entry the attempt at `root` holds, if its trees are views of one."""
    return _HELD.get(root)


def remove_workspace(path: Path) -> None:
    """Delete the workspace, read-only files and directories included; a missing one is fine."""
    if not os.path.lexists(path):
        return
    _let_go(path)
    try:
        force_rmtree(str(path))
    except OSError as error:
        raise InfrastructureFailure(f"cannot remove workspace {path}: {error}") from None


def _let_go(path: Path) -> None:
    """Unmount the views under the attempt's directory and release its pin of the cache entry."""
    unmount_under(path)
    pinned = _HELD.pop(Path(path), None)
    if pinned is not None:
        pinned.release()


def discard_workspace(path: Path) -> Path | None:
    """Remove the attempt's directory from its path at once and delete it in the background:
    its views are unmounted and its pin released here, then the folder is renamed to trash
    beside it (atomic, same filesystem) for a detached low-priority process to delete. Where
    the rename fails, it is deleted here. A crash at any point leaves at worst a trash folder,
    which the next sweep (`sweep_trash`) removes. The trash folder, None when there was
    nothing to move or it was deleted here."""
    if not os.path.lexists(path):
        return None
    _let_go(path)
    if mounts_under(path):  # a mount that would not go: never move it, let the removal fail
        remove_workspace(path)
        return None
    trash = path.with_name(TRASH_PREFIX + path.name.removeprefix(ATTEMPT_DIR_PREFIX))
    try:
        os.rename(path, trash)
    except OSError:
        remove_workspace(path)
        return None
    delete_in_background(trash.parent)
    return trash


def delete_in_background(parent: Path) -> None:
    """Start a detached, idle-priority process that deletes every trash folder in `parent`
    (this attempt's and any a crash left); its exit status is collected by the next call, or
    by `collect_deleters`."""
    spawn_deleter(parent, TRASH_PREFIX)


def collect_deleters() -> None:
    """Collect the exit status of the background deleters that have finished, so that none is
    left a zombie while a worker waits for work."""
    collect()


def remove_leftovers(directories: Iterable[str]) -> None:
    """Remove dead attempts' directories that are on this machine; one that cannot be removed
    is left for the next sweep (a sweep never stops a worker)."""
    for directory in directories:
        try:
            remove_workspace(Path(directory))
        except InfrastructureFailure:
            continue
