"""The tree a base gives with a few paths changed, reckoned from those paths alone, is the tree
git writes from an index of every file: for each kind of change, in a real repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agentctl.execution.git import WorkspaceGit
from agentctl.execution.workspaces.tree_edit import (
    diff_paths,
    names_gitlink,
    patched_tree,
    small_and_whole,
    work_tree_tree,
)
from tests.conftest import git, make_repo

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


def _modify(tree: Path) -> None:
    (tree / "src/app.py").write_text("def greet(name):\n    return f'hi {name}'\n")


def _add_nested(tree: Path) -> None:
    (tree / "new/deep/er").mkdir(parents=True)
    (tree / "new/deep/er/módulo uno.py").write_text("X = 1\n")


def _add_spaced_folders(tree: Path) -> None:
    """New folders whose names hold spaces: git answers `<commit>:new one missing` for each, a
    line as many words long as the name makes it (a run of a hostile agent's file names)."""
    (tree / "new one/a b c").mkdir(parents=True)
    (tree / "new one/a b c/x.md").write_text("X\n")
    (tree / "new one/y z.md").write_text("Y\n")


def _empty_a_folder(tree: Path) -> None:
    shutil.rmtree(tree / "src/config")


def _empty_a_folder_and_refill_it(tree: Path) -> None:
    shutil.rmtree(tree / "src/config")
    (tree / "src/config").mkdir()
    (tree / "src/config/other.py").write_text("OTHER = 1\n")


def _rename_across_folders(tree: Path) -> None:
    (tree / "lib").mkdir()
    os.rename(tree / "src/config/settings.py", tree / "lib/settings.py")


def _rename_to_a_quoted_name(tree: Path) -> None:
    os.rename(tree / "src/app.py", tree / 'src/say "hi"\tnow.py')


def _make_executable(tree: Path) -> None:
    os.chmod(tree / "tests/test_app.py", 0o755)


def _links(tree: Path) -> None:
    (tree / "README.md").unlink()
    os.symlink("src/app.py", tree / "README.md")
    os.symlink("../src", tree / "tests/src")


def _file_becomes_folder(tree: Path) -> None:
    (tree / "README.md").unlink()
    (tree / "README.md").mkdir()
    (tree / "README.md/index.md").write_text("# moved\n")


def _folder_becomes_file(tree: Path) -> None:
    shutil.rmtree(tree / "src/config")
    (tree / "src/config").write_text("TIMEOUT = 30\n")


def _binary(tree: Path) -> None:
    (tree / "logo.png").write_bytes(PNG)
    (tree / "src/app.py").write_bytes(PNG[:40])


EDITS: dict[str, Callable[[Path], None]] = {
    fn.__name__.strip("_"): fn for fn in (
        _modify, _add_nested, _add_spaced_folders, _empty_a_folder, _empty_a_folder_and_refill_it,
        _rename_across_folders, _rename_to_a_quoted_name, _make_executable, _links, _file_becomes_folder,
        _folder_becomes_file, _binary)
}


def _changed(tree: Path, base: str) -> tuple[str, Path]:
    """git's own answer, from an index of every file: the work tree's tree; and the diff."""
    git(tree, "add", "--all")
    written = git(tree, "write-tree")
    diff = tree.parent / "patch.diff"
    diff.write_bytes(subprocess.run(
        ["git", "-C", str(tree), "diff", "--cached", "--binary", "--full-index", base],
        check=True, capture_output=True).stdout)
    return written, diff


@pytest.fixture
def clone(repo: Path, tmp_path: Path) -> Path:
    (repo / "src/config/extra.py").write_text("EXTRA = 2\n")
    git(repo, "add", "--all")
    git(repo, "commit", "-q", "-m", "a second file in src/config")
    git(repo, "clone", "-q", str(repo), str(tmp_path / "clone"))
    return tmp_path / "clone"


def _git_of(tree: Path) -> WorkspaceGit:
    home = tree.parent / "git-home"
    home.mkdir(exist_ok=True)
    return WorkspaceGit(git_dir=tree / ".git", work_tree=tree, home=home)


def _edited(clone: Path, edit: str) -> tuple[str, str, Path]:
    """(the base commit, the tree git writes after `edit`, the diff between them)."""
    base = git(clone, "rev-parse", "HEAD")
    EDITS[edit](clone)
    return base, *_changed(clone, base)


@pytest.mark.parametrize("edit", EDITS)
def test_the_patched_tree_from_the_changed_paths_is_the_one_git_writes(
        clone: Path, edit: str) -> None:
    base, written, diff = _edited(clone, edit)
    assert patched_tree(_git_of(clone), base, diff, clone.parent / "i") == (written, None)
    assert not (clone.parent / "i").exists()


@pytest.mark.parametrize("edit", EDITS)
def test_the_patched_tree_in_a_copy_of_a_small_whole_index_is_the_one_git_writes(
        clone: Path, edit: str) -> None:
    base_index = clone.parent / "base.index"
    shutil.copy2(clone / ".git" / "index", base_index)
    assert small_and_whole(base_index, clone / ".git")
    base, written, diff = _edited(clone, edit)
    assert patched_tree(_git_of(clone), base, diff, clone.parent / "i",
                        whole=base_index) == (written, None)
    assert not (clone.parent / "i").exists()


@pytest.mark.parametrize("edit", EDITS)
def test_a_work_trees_tree_from_its_changed_paths_is_the_one_git_writes(
        clone: Path, edit: str) -> None:
    base, written, _diff = _edited(clone, edit)
    changed = git(clone, "diff", "--cached", "--name-only", "--no-renames", "-z", base)
    paths = [os.fsencode(path) for path in changed.split("\0") if path]
    assert work_tree_tree(_git_of(clone), base, paths, clone.parent / "i") == written


def test_a_folder_whose_name_cannot_be_a_line_of_git_input_is_read_all_the_same(
        clone: Path) -> None:
    """The base's folders are named by path in one cat-file, a line each: `a\nb/` of the
    base, changed beside folders after it, is read one depth at a time instead."""
    (clone / "a\nb").mkdir()
    (clone / "a\nb/x.py").write_text("X = 1\n")
    git(clone, "add", "--all")
    git(clone, "commit", "-q", "-m", "a folder with a newline in its name")
    base = git(clone, "rev-parse", "HEAD")
    (clone / "a\nb/x.py").write_text("X = 2\n")
    _modify(clone)
    written, diff = _changed(clone, base)
    assert patched_tree(_git_of(clone), base, diff, clone.parent / "i") == (written, None)
    paths = [b"a\nb/x.py", b"src/app.py"]
    assert work_tree_tree(_git_of(clone), base, paths, clone.parent / "i") == written


def test_a_work_trees_tree_counts_what_the_paths_name_and_nothing_else(clone: Path) -> None:
    """Only the paths given are looked at: a change elsewhere is not seen (the caller names
    every path that may differ, a view's upper layer)."""
    base = git(clone, "rev-parse", "HEAD")
    _modify(clone)
    (clone / "README.md").write_text("# unlisted\n")
    tree = work_tree_tree(_git_of(clone), base, [b"src/app.py"], clone.parent / "i")
    git(clone, "add", "src/app.py")
    assert tree == git(clone, "write-tree")


def test_a_diff_that_does_not_apply_gives_gits_first_error_line(clone: Path) -> None:
    base = git(clone, "rev-parse", "HEAD")
    _modify(clone)
    _written, diff = _changed(clone, base)
    (clone / "src/app.py").write_text("something else\n")
    git(clone, "commit", "-q", "-am", "the file the diff changes, changed")
    tree, error = patched_tree(_git_of(clone), git(clone, "rev-parse", "HEAD"), diff,
                               clone.parent / "i")
    assert tree is None and error is not None and "src/app.py" in error
    whole = patched_tree(_git_of(clone), git(clone, "rev-parse", "HEAD"), diff,
                         clone.parent / "i", whole=clone / ".git" / "index")
    assert whole == (None, error)  # refused the same way in an index of every file


def test_an_index_that_is_split_or_large_is_not_read_whole(clone: Path) -> None:
    index = clone / ".git" / "index"
    assert small_and_whole(index, clone / ".git")
    git(clone, "-c", "core.splitIndex=true", "update-index", "--split-index")
    assert not small_and_whole(index, clone / ".git")
    git(clone, "update-index", "--no-split-index")
    for number in range(700):
        (clone / f"file-{number:04d}-{'x' * 40}.txt").touch()
    git(clone, "add", "--all")
    assert not small_and_whole(index, clone / ".git")


def test_a_diff_that_changes_a_submodule_is_told_apart(tmp_path: Path, repo: Path) -> None:
    outer = make_repo(tmp_path / "outer", {"a.txt": "a\n"})
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(repo), "sub")
    git(outer, "commit", "-q", "-m", "a submodule")
    diff = tmp_path / "sub.diff"
    diff.write_bytes(subprocess.run(["git", "-C", str(outer), "diff", "--binary", "HEAD~1"],
                                    check=True, capture_output=True).stdout)
    assert names_gitlink(diff)
    _modify(repo)
    plain = tmp_path / "plain.diff"
    plain.write_bytes(subprocess.run(["git", "-C", str(repo), "diff", "--binary"], check=True,
                                     capture_output=True).stdout)
    assert not names_gitlink(plain)


def test_a_diffs_paths_asked_again_are_the_same_and_follow_its_text_not_its_name(
        clone: Path) -> None:
    """Kept by the diff's digest (a run asks twice): the same file rewritten with another
    patch names that patch's paths."""
    base = git(clone, "rev-parse", "HEAD")
    _rename_across_folders(clone)
    _written, diff = _changed(clone, base)
    first = diff_paths(_git_of(clone), diff)
    assert first == {b"src/config/settings.py", b"lib/settings.py"}
    first.add(b"changed by the caller")
    assert diff_paths(_git_of(clone), diff) == {b"src/config/settings.py", b"lib/settings.py"}
    git(clone, "reset", "-q", "--hard")
    _modify(clone)
    _changed(clone, base)  # the same patch.diff, now this change's
    assert diff_paths(_git_of(clone), diff) == {b"src/app.py"}


@pytest.mark.parametrize("files", [1, 600], ids=["seed-on-the-command-line", "seed-written-first"])
def test_a_work_trees_tree_keeps_the_bases_modes_where_git_trusts_no_executable_bit(
        clone: Path, files: int) -> None:
    """With `core.fileMode` off git keeps a changed file's mode from its index entry: the seed
    is there before the file is staged, given with the paths or, for a seed too long for one
    command line, written by a git of its own."""
    names = [f"many/{number:03d}-{'x' * 90}.sh" for number in range(files)]
    for name in names:
        (clone / "many").mkdir(exist_ok=True)
        (clone / name).write_text("echo base\n")
        os.chmod(clone / name, 0o755)
    git(clone, "add", "--all")
    git(clone, "commit", "-q", "-m", "scripts")
    base = git(clone, "rev-parse", "HEAD")
    git(clone, "config", "core.fileMode", "false")
    for name in names:
        (clone / name).write_text("echo patched\n")
        os.chmod(clone / name, 0o644)
    written, _diff = _changed(clone, base)
    assert git(clone, "ls-tree", "-r", written, "--", names[0]).startswith("100755 ")
    paths = [os.fsencode(name) for name in names]
    assert work_tree_tree(_git_of(clone), base, paths, clone.parent / "i") == written


def test_a_commits_folders_read_once_are_not_read_again(clone: Path, tmp_path: Path) -> None:
    """The patch's tree on the base, then the verified tree's: the second reckoning reads
    the base's folders from the first (shown here by a repository that has none of them)."""
    base, written, diff = _edited(clone, "add_nested")
    assert patched_tree(_git_of(clone), base, diff, clone.parent / "i") == (written, None)
    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(empty))
    knows_nothing = WorkspaceGit(git_dir=empty, work_tree=clone, home=clone.parent / "git-home")
    paths = diff_paths(_git_of(clone), diff)
    assert work_tree_tree(knows_nothing, base, paths, clone.parent / "i") == written
