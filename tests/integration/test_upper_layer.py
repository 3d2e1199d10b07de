"""Reading a view's upper layer: what `git add` is pointed at and which files of the base git is
made to re-read. Real overlay mounts of a real cached checkout, real git."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentctl.domain.spec import PatchBoundary
from agentctl.execution.workspaces import overlay, upper_layer
from agentctl.execution.workspaces.discard import remove_workspace
from agentctl.execution.workspaces.patch_collector import collect_patch
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.execution.workspaces.workspace import (
    AttemptDirs,
    clone_at,
    create_attempt_dirs,
    view_layers,
)
from tests.conftest import git, make_repo
from tests.machine import unavailable

NO_BOUNDARY = PatchBoundary(allowed_paths=(), forbidden_paths=(), lockfile_patterns=(),
                            generated_patterns=())


@pytest.fixture
def view(tmp_path: Path) -> Iterator[AttemptDirs]:
    if not overlay.supported(tmp_path):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")
    files = {f"pkg/m{number}.py": f"M = {number}\n" for number in range(200)}
    repo = make_repo(tmp_path / "source", {
        **files, "README.md": "# r\n", "src/app.py": "A = 1\n", "src/deep/er.py": "E = 1\n",
    })
    dirs = create_attempt_dirs(tmp_path)
    clone_at(str(repo), git(repo, "rev-parse", "HEAD"), dirs, is_url=False,
             cache=TreeCache(tmp_path / "trees", 2**30))
    yield dirs
    remove_workspace(dirs.root)


def read(dirs: AttemptDirs, indexed_second: int = 0) -> upper_layer.Written:
    layers = view_layers(dirs)
    assert layers is not None
    return upper_layer.read(*layers, indexed_second)


def test_base_files_written_or_removed_are_named_new_ones_by_their_folder(
        view: AttemptDirs) -> None:
    """A new file at the top is named itself (its folder would be the whole tree), a new
    folder as a whole."""
    tree = view.tree
    (tree / "src" / "app.py").write_text("A = 2\n")
    (tree / "README.md").unlink()
    shutil.rmtree(tree / "src" / "deep")
    (tree / "pkg" / "new.py").write_text("N = 1\n")
    (tree / "fresh" / "folder").mkdir(parents=True)
    (tree / "fresh" / "folder" / "f.py").write_text("F = 1\n")
    (tree / "top.py").write_text("T = 1\n")
    (tree / ".git" / "agents-own").write_text("never looked at\n")
    written = read(view)
    assert written.files == ("README.md", "src/app.py")
    assert written.to_add == ("fresh", "pkg", "src/deep", "top.py")
    assert written.scopes() == ["README.md", "fresh", "pkg", "src/app.py", "src/deep", "top.py"]


def test_a_folder_made_again_is_named_whole(view: AttemptDirs) -> None:
    shutil.rmtree(view.tree / "src")
    (view.tree / "src").mkdir()
    assert read(view).to_add == ("src",)


def test_past_the_bound_written_files_are_named_by_their_folders(view: AttemptDirs) -> None:
    """git matches each index entry against each pathspec: thousands of paths would cost more
    than their folders' files."""
    (view.tree / "src" / "deep" / "new.py").write_text("N = 1\n")
    (view.tree / "src" / "app.py").write_text("A = 2\n")
    for number in range(upper_layer.MAX_EXACT_PATHS - 1):
        (view.tree / "pkg" / f"m{number}.py").write_text("changed\n")
    assert len(read(view).scopes()) == upper_layer.MAX_EXACT_PATHS + 1
    (view.tree / "pkg" / "m199.py").write_text("changed\n")
    assert read(view).scopes() == ["pkg", "src"]


def test_only_files_written_within_the_indexed_second_are_re_read(view: AttemptDirs) -> None:
    """Their ctime could equal their entry's; a later one cannot."""
    (view.tree / "src" / "app.py").write_text("A = 2\n")
    (view.tree / "README.md").unlink()
    (view.tree / "src" / "new.py").write_text("N = 1\n")
    written = os.lstat(view.tree / "src" / "app.py").st_ctime_ns // 10**9
    (line,) = read(view, indexed_second=written).reread
    assert line.startswith("100644 ") and line.endswith("\tsrc/app.py\0")
    assert read(view, indexed_second=written - 1).reread == ()


def test_a_same_size_edit_a_second_after_the_index_with_its_times_put_back_is_collected(
        view: AttemptDirs) -> None:
    """Not marked for re-reading: git sees the ctime it cannot be given back."""
    indexed = os.stat(view.index).st_mtime_ns // 10**9
    while time.time() < indexed + 1:
        time.sleep(0.05)
    target = view.tree / "src" / "app.py"
    before = os.lstat(target)
    target.write_text("A = 9\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert read(view, indexed).reread == ()
    base = git(view.tree, "rev-parse", "HEAD")
    collected = collect_patch(view, base, view.scratch / "patch.diff", NO_BOUNDARY)
    assert [(c.path, c.additions, c.deletions) for c in collected.changes] == [
        ("src/app.py", 1, 1)]


def _write(tree: Path, path: str, text: str = "new\n") -> None:
    (tree / path).parent.mkdir(parents=True, exist_ok=True)
    (tree / path).write_text(text)


def _rename(tree: Path, old: str, new: str) -> None:
    (tree / new).parent.mkdir(parents=True, exist_ok=True)
    (tree / old).rename(tree / new)


def content_mode_and_removal(t: Path) -> None:
    _write(t, "src/app.py", "A = 2\n")
    os.chmod(t / "README.md", 0o755)
    (t / "pkg" / "m1.py").unlink()


def new_files_at_the_top_in_old_and_new_folders(t: Path) -> None:
    _write(t, "top.py")
    _write(t, "pkg/new.py")
    _write(t, "fresh/deep/er.py")


def ignored_files_and_folders(t: Path) -> None:
    _write(t, "debug.log")
    _write(t, "build/out.o")
    _write(t, "build/keep.txt", "K\n")
    _write(t, "src/deep/x.log")


def renames(t: Path) -> None:
    _rename(t, "pkg/m2.py", "pkg/moved.py")
    _rename(t, "src/app.py", "elsewhere/app.py")
    _write(t, "elsewhere/app.py", "A = 1\nB = 2\n")


def folders_removed_made_again_and_turned_into_files(t: Path) -> None:
    shutil.rmtree(t / "src" / "deep")
    (t / "src" / "deep").mkdir()
    shutil.rmtree(t / "pkg")
    (t / "pkg").mkdir()
    _write(t, "pkg/m3.py", "M = 3\n")
    (t / "README.md").unlink()
    _write(t, "README.md/x")


def links(t: Path) -> None:
    os.symlink("src", t / "to-src")
    os.symlink("/etc/passwd", t / "src" / "out")
    (t / "src" / "app.py").unlink()
    os.symlink("../README.md", t / "src" / "app.py")


def droppings(t: Path) -> None:
    _write(t, "src/__pycache__/app.cpython-311.pyc", "\0pyc")
    _write(t, "build/x.pyc")
    _rename(t, "pkg/m4.py", "pkg/m4.pyc")
    _write(t, "src/app.py", "A = 3\n")


def odd_names(t: Path) -> None:
    _write(t, "sp ace/qu\"ote.py")
    _write(t, "new\nline.txt")
    _write(t, "déjà vu.txt")
    _write(t, "-dash.py")
    _write(t, "pkg/m5.py", "M = 'ü'\n")


EDITS: list[Callable[[Path], None]] = [
    content_mode_and_removal, new_files_at_the_top_in_old_and_new_folders,
    ignored_files_and_folders, renames, folders_removed_made_again_and_turned_into_files, links,
    droppings, odd_names,
]
DROPPINGS = PatchBoundary(allowed_paths=(), forbidden_paths=(), lockfile_patterns=(),
                          generated_patterns=(), ignore_generated=("__pycache__", "*.pyc"))


@pytest.mark.parametrize("edit", EDITS, ids=[edit.__name__ for edit in EDITS])
def test_a_view_collects_byte_for_byte_what_a_checkout_of_its_own_collects(
        tmp_path: Path, edit: Callable[[Path], None]) -> None:
    """Looking only where the upper layer says changes nothing of the patch: the same diff,
    tree, changes and left-out droppings as staging the whole of a checkout of its own."""
    if not overlay.supported(tmp_path):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")
    repo = make_repo(tmp_path / "source", {
        **{f"pkg/m{number}.py": f"M = {number}\n" for number in range(8)},
        "README.md": "# r\n", "src/app.py": "A = 1\n", "src/deep/er.py": "E = 1\n",
        ".gitignore": "*.log\nbuild/\n", "build/keep.txt": "k\n",
    })
    git(repo, "add", "-f", "build/keep.txt")
    git(repo, "commit", "-qm", "keep one build file")
    base = git(repo, "rev-parse", "HEAD")
    collected = []
    for cache in (None, TreeCache(tmp_path / "trees", 2**30)):
        dirs = create_attempt_dirs(tmp_path)
        clone_at(str(repo), base, dirs, is_url=False, cache=cache)
        edit(dirs.tree)
        patch = collect_patch(dirs, base, dirs.scratch / "patch.diff", DROPPINGS)
        collected.append((patch.diff_path.read_bytes(), patch.changes, patch.diff_lines,
                          patch.tree, patch.excluded))
        remove_workspace(dirs.root)
    assert collected[0][1], "the edit changed nothing"
    assert collected[1] == collected[0]
