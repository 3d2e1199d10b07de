"""An attempt's directory leaves its path at once and is deleted in the background: renamed to
trash beside it, emptied by a detached process; a trash a crash left goes with the next deleter
or the workers' sweep; a cache entry the attempt's views showed is never touched. Real git
repositories, real overlay mounts, real processes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from agentctl.execution.workspaces import overlay
from agentctl.execution.workspaces.discard import discard_workspace
from agentctl.execution.workspaces.trash import TRASH_PREFIX, spawn_deleter, sweep_trash
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.execution.workspaces.workspace import (
    clone_at,
    create_attempt_dirs,
    uses_views,
)
from tests.conftest import git, make_repo
from tests.e2e.workers_support import wait_until
from tests.machine import unavailable


def _trash(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.name.startswith(TRASH_PREFIX))


def _read_only_tree(top: Path) -> None:
    """What an agent may leave: read-only files in folders it locked (unlistable ones too)."""
    locked = top / "locked"
    (locked / "deeper").mkdir(parents=True)
    for path in (locked / "deeper" / "file.txt", locked / "file.txt"):
        path.write_text("x")
        path.chmod(0o444)
    (locked / "deeper").chmod(0o000)
    locked.chmod(0o500)


def _digest(tree: Path) -> str:
    """Every path below `tree`, its mode and its bytes."""
    digest = hashlib.sha256()
    for folder, subfolders, names in sorted(os.walk(tree)):
        subfolders.sort()
        for name in sorted(names + subfolders):
            path = Path(folder, name)
            info = path.lstat()
            digest.update(f"{path.relative_to(tree)}\0{info.st_mode}\0".encode())
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def test_a_discarded_workspace_is_gone_from_its_path_at_once_and_its_trash_is_emptied_later(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "user", {"app.py": "VERSION = 1\n"})
    parent = tmp_path / "attempts"
    parent.mkdir()
    dirs = create_attempt_dirs(parent)
    clone_at(str(repo), git(repo, "rev-parse", "HEAD"), dirs, is_url=False)
    _read_only_tree(dirs.tree)

    trash = discard_workspace(dirs.root)

    assert not os.path.lexists(dirs.root)
    assert trash is not None and trash.parent == parent and trash.name.startswith(TRASH_PREFIX)
    wait_until(lambda: not trash.exists(), timeout=120, what="the trash to be emptied")
    assert list(parent.iterdir()) == []


def test_a_discarded_view_workspace_leaves_its_cache_entry_as_it_was(tmp_path: Path) -> None:
    if not overlay.supported(tmp_path):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")
    repo = make_repo(tmp_path / "user", {"app.py": "VERSION = 1\n", "lib/util.py": "x = 1\n"})
    cache = TreeCache(tmp_path / "trees", 2**30)
    parent = tmp_path / "attempts"
    parent.mkdir()
    dirs = create_attempt_dirs(parent)
    clone_at(str(repo), git(repo, "rev-parse", "HEAD"), dirs, is_url=False, cache=cache)
    assert uses_views(dirs)
    before = _digest(tmp_path / "trees")
    (dirs.tree / "app.py").write_text("VERSION = 2\n")
    (dirs.tree / "lib" / "util.py").unlink()
    _read_only_tree(dirs.tree)

    assert discard_workspace(dirs.root) is not None

    assert not os.path.lexists(dirs.root)
    assert overlay.mounts_under(parent) == []
    wait_until(lambda: not _trash(parent), timeout=120, what="the trash to be emptied")
    assert _digest(tmp_path / "trees") == before


def test_a_trash_a_crash_left_goes_with_the_next_deleter(tmp_path: Path) -> None:
    left = tmp_path / f"{TRASH_PREFIX}crashed"
    _read_only_tree(left)
    (tmp_path / "agentctl-ws-someone-elses").mkdir()  # not trash: never touched

    spawn_deleter(tmp_path, TRASH_PREFIX)

    wait_until(lambda: not left.exists(), timeout=120, what="the crashed run's trash to go")
    assert [path.name for path in tmp_path.iterdir()] == ["agentctl-ws-someone-elses"]


def test_the_sweep_removes_trash_and_nothing_else(tmp_path: Path) -> None:
    left = tmp_path / f"{TRASH_PREFIX}crashed"
    _read_only_tree(left)
    (tmp_path / "agentctl-ws-live").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("kept\n")
    os.symlink(outside, tmp_path / f"{TRASH_PREFIX}a-link")  # a link is never followed

    assert sweep_trash(tmp_path, TRASH_PREFIX) == 1

    assert sorted(path.name for path in tmp_path.iterdir()) == [
        f"{TRASH_PREFIX}a-link", "agentctl-ws-live", "outside"]
    assert (outside / "kept.txt").read_text() == "kept\n"


def test_a_workers_sweep_removes_the_trash_a_crash_left(tmp_path: Path) -> None:
    from agentctl.services.lifecycle.sweep import sweep_attempt_directories
    from agentctl.testing import InMemoryStorage

    left = tmp_path / f"{TRASH_PREFIX}crashed"
    _read_only_tree(left)

    sweep_attempt_directories(InMemoryStorage(), tmp_path)

    assert not left.exists()
