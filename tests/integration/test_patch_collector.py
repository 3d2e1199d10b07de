"""Collecting the patch: the workspace diff against the base commit, parsed and classified."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agentctl.domain.agent_text import control_character
from agentctl.domain.enums import ChangeType
from agentctl.domain.errors import InfrastructureFailure
from agentctl.domain.judge import DiffLine
from agentctl.domain.patch import FileChange, check_boundary
from agentctl.domain.spec import PatchBoundary
from agentctl.execution.git import copy_index
from agentctl.execution.workspaces.discard import remove_workspace
from agentctl.execution.workspaces.patch_collector import CollectedPatch, collect_patch
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.execution.workspaces.tree_edit import diff_paths, patched_tree
from agentctl.execution.workspaces.workspace import (
    AttemptDirs,
    clone_at,
    create_attempt_dirs,
    uses_views,
)
from tests.conftest import git

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
BOUNDARY = PatchBoundary(
    allowed_paths=(), forbidden_paths=(".github/**",),
    lockfile_patterns=("poetry.lock", "**/package-lock.json"), generated_patterns=("gen/**",),
)


@pytest.fixture
def base(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(params=["checkout", "view"])
def workspace(request: pytest.FixtureRequest, repo: Path, base: str,
              tmp_path: Path) -> Iterator[Path]:
    """The work tree of a fresh attempt (its private directory is the work tree's parent): a
    checkout of its own, or a view of the tree cache's checkout of the base."""
    dirs = create_attempt_dirs(tmp_path)
    cache = TreeCache(tmp_path / "trees", 2**30) if request.param == "view" else None
    clone_at(str(repo), base, dirs, is_url=False, cache=cache)
    assert uses_views(dirs) is (cache is not None)
    yield dirs.tree
    remove_workspace(dirs.root)


def dirs_of(workspace: Path) -> AttemptDirs:
    return AttemptDirs(workspace.parent)


def collect(workspace: Path, base: str, boundary: PatchBoundary = BOUNDARY) -> CollectedPatch:
    return collect_patch(dirs_of(workspace), base, workspace.parent / "out" / "patch.diff",
                         boundary)


def applies(workspace: Path, base: str, diff: Path) -> tuple[bool, str | None]:
    tree, error = patched_tree(dirs_of(workspace).git, base, diff, workspace.parent / "apply.index")
    return tree is not None, error


def only(patch: CollectedPatch) -> FileChange:
    assert len(patch.changes) == 1, patch.changes
    return patch.changes[0]


def test_a_modified_file_has_its_counts_and_line_numbers(workspace: Path, base: str) -> None:
    (workspace / "src/app.py").write_text("def greet(name):\n    return f'hi {name}'\n")
    patch = collect(workspace, base)
    change = only(patch)
    assert (change.path, change.change_type, change.additions, change.deletions) == (
        "src/app.py", ChangeType.MODIFIED, 1, 1)
    assert patch.diff_lines == (
        DiffLine(path="src/app.py", line_number=2, added=False, text="    return f'hello {name}'"),
        DiffLine(path="src/app.py", line_number=2, added=True, text="    return f'hi {name}'"),
    )
    assert not patch.empty and patch.diff_path.read_text().startswith("diff --git a/src/app.py")


def test_a_same_size_edit_in_the_checkouts_own_second_is_in_the_patch(
        repo: Path, base: str, tmp_path: Path) -> None:
    """git trusts stat data only for files older than the index: an edit in the checkout's own
    second, of the same size, is found only if agentctl's copies of the index keep its mtime (a
    fast agent once produced "no patch" this way)."""
    for _ in range(5):  # until clone and edit share a second (the first try, normally)
        time.sleep(1 - time.time() % 1)
        second = int(time.time())
        dirs = create_attempt_dirs(tmp_path)
        clone_at(str(repo), base, dirs, is_url=False)
        (dirs.tree / "src/app.py").write_text("def greet(name):\n    return f'howdy {name}'\n")
        if int(os.stat(dirs.tree / "src/app.py").st_ctime) == second:
            break
    else:
        pytest.fail("five clones each took more than a second: the race was never set up")
    time.sleep(1 - time.time() % 1)  # collect in a later second than the edit
    patch = collect(dirs.tree, base)
    assert [(c.path, c.additions, c.deletions) for c in patch.changes] == [("src/app.py", 1, 1)]


def test_a_copied_index_keeps_the_mtime_git_reads_its_stat_cache_against(
        workspace: Path) -> None:
    copy = workspace.parent / "copied.index"
    copy_index(workspace / ".git" / "index", copy)
    assert copy.stat().st_mtime_ns == (workspace / ".git" / "index").stat().st_mtime_ns


def test_an_untracked_file_is_added(workspace: Path, base: str) -> None:
    (workspace / "src/new_module.py").write_text("A = 1\nB = 2\n")
    change = only(collect(workspace, base))
    assert (change.path, change.change_type, change.additions) == (
        "src/new_module.py", ChangeType.ADDED, 2)


def test_ignored_files_are_not_part_of_the_patch(workspace: Path, base: str) -> None:
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "debug.log").write_text("noise\n")
    assert [c.path for c in collect(workspace, base).changes] == [".gitignore"]


@pytest.mark.parametrize("view", [False, True], ids=["checkout", "view"])
def test_new_files_in_ignored_folders_are_left_out_and_the_rest_is_collected(
        repo: Path, tmp_path: Path, view: bool) -> None:
    """A view stages the folders its new files are in and the base's files it wrote: git says
    so when one of those is ignored (a tool's build folder, a tracked file kept under one), and
    collection goes on without it instead of failing."""
    (repo / ".gitignore").write_text("build/\nnode_modules/\n")
    (repo / "build").mkdir()
    (repo / "build" / "keep.txt").write_text("kept\n")
    git(repo, "add", "-f", ".gitignore", "build/keep.txt")
    git(repo, "commit", "-qm", "ignore build output")
    base = git(repo, "rev-parse", "HEAD")
    dirs = create_attempt_dirs(tmp_path)
    clone_at(str(repo), base, dirs, is_url=False,
             cache=TreeCache(tmp_path / "trees", 2**30) if view else None)
    assert uses_views(dirs) is view
    (dirs.tree / "build" / "lib").mkdir()
    (dirs.tree / "build" / "lib" / "app.o").write_bytes(b"\x7fELF")
    (dirs.tree / "build" / "keep.txt").write_text("kept, and changed\n")
    (dirs.tree / "node_modules" / "left-pad").mkdir(parents=True)
    (dirs.tree / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (dirs.tree / "src" / "extra.py").write_text("X = 1\n")
    patch = collect(dirs.tree, base)
    assert [c.path for c in patch.changes] == ["build/keep.txt", "src/extra.py"]
    remove_workspace(dirs.root)


def test_a_folder_emptied_and_made_again_loses_every_file_it_held(
        workspace: Path, base: str) -> None:
    """`rm -rf src/config && mkdir src/config`: in a view the folder is made again opaque,
    hiding the base's files below it without a whiteout for each; they are deleted all the
    same."""
    shutil.rmtree(workspace / "src" / "config")
    (workspace / "src" / "config").mkdir()
    patch = collect(workspace, base)
    assert [(c.path, c.change_type) for c in patch.changes] == [
        ("src/config/settings.py", ChangeType.DELETED)]
    assert applies(workspace, base, patch.diff_path) == (True, None)


def test_a_deleted_file_counts_its_lines_as_deletions(workspace: Path, base: str) -> None:
    (workspace / "tests/test_app.py").unlink()
    change = only(collect(workspace, base))
    assert (change.path, change.change_type, change.deletions, change.test_file) == (
        "tests/test_app.py", ChangeType.DELETED, 5, True)


def test_a_renamed_file_names_both_paths(workspace: Path, base: str) -> None:
    os.rename(workspace / "src/app.py", workspace / "src/greeting.py")
    change = only(collect(workspace, base))
    assert (change.change_type, change.old_path, change.path) == (
        ChangeType.RENAMED, "src/app.py", "src/greeting.py")
    assert (change.additions, change.deletions) == (0, 0)


def test_moving_a_file_out_of_a_forbidden_directory_fails_the_boundary(
    workspace: Path, base: str,
) -> None:
    os.rename(workspace / ".github/workflows/deploy.yml", workspace / "deploy.yml")
    patch = collect(workspace, base)
    assert only(patch).forbidden_by_policy
    check = check_boundary(patch.changes, BOUNDARY)
    assert check.forbidden_path_violations == (".github/workflows/deploy.yml",)


def test_paths_with_spaces_quotes_and_accents_come_back_verbatim(
    workspace: Path, base: str,
) -> None:
    (workspace / "docs b").mkdir()
    (workspace / 'docs b/café "menu".md').write_text("# menu\n")
    os.rename(workspace / "README.md", workspace / "docs b/READ ME.md")
    (workspace / "docs b/READ ME.md").write_text("# service\nmore\n")
    changes = {c.path: c for c in collect(workspace, base).changes}
    assert set(changes) == {'docs b/café "menu".md', "docs b/READ ME.md"}
    renamed = changes["docs b/READ ME.md"]
    assert (renamed.change_type, renamed.old_path, renamed.additions) == (
        ChangeType.RENAMED, "README.md", 1)


def test_a_file_whose_name_is_not_utf8_is_collected(workspace: Path, base: str) -> None:
    """Its name is shown with a replacement character; the tree holds its bytes (a view named
    it to git undecoded: encoded as UTF-8, the name failed with a traceback)."""
    (workspace / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n")
    patch = collect(workspace, base)
    assert [change.path for change in patch.changes] == ["caf\ufffd.txt"]
    assert applies(workspace, base, patch.diff_path) == (True, None)


def test_a_binary_file_is_flagged_without_line_counts(workspace: Path, base: str) -> None:
    (workspace / "logo.png").write_bytes(PNG)
    patch = collect(workspace, base)
    change = only(patch)
    assert (change.path, change.binary, change.additions, change.deletions) == (
        "logo.png", True, 0, 0)
    assert patch.diff_lines == ()
    assert b"GIT binary patch" in patch.diff_path.read_bytes()
    assert applies(workspace, base, patch.diff_path) == (True, None)


def test_text_that_is_not_utf8_is_parsed_with_replacement_characters(
    workspace: Path, base: str,
) -> None:
    (workspace / "latin1.txt").write_bytes(b"caf\xe9 cr\xe8me\nline\rwith a lone carriage return\n")
    patch = collect(workspace, base)
    assert only(patch).additions == 2
    assert patch.diff_lines[0].text == "caf\ufffd cr\ufffdme"
    assert patch.diff_lines[1].text == "line\rwith a lone carriage return"


def test_lockfile_test_and_generated_changes_are_classified(workspace: Path, base: str) -> None:
    (workspace / "poetry.lock").write_text("[[package]]\n")
    (workspace / "gen").mkdir()
    (workspace / "gen/schema.py").write_text("X = 1\n")
    (workspace / "tests/test_app.py").write_text("def test_nothing():\n    pass\n")
    patch = collect(workspace, base)
    flags = {c.path: (c.lockfile, c.generated, c.test_file) for c in patch.changes}
    assert flags == {
        "poetry.lock": (True, False, False),
        "gen/schema.py": (False, True, False),
        "tests/test_app.py": (False, False, True),
    }
    check = check_boundary(patch.changes, BOUNDARY)
    assert check.unexpected_lockfile_changes == ("poetry.lock",)
    assert check.unexpected_generated_files == ("gen/schema.py",)


def test_no_changes_give_an_empty_patch_that_applies(workspace: Path, base: str) -> None:
    patch = collect(workspace, base)
    assert patch.empty and patch.changes == () and patch.diff_lines == ()
    assert patch.diff_path.read_bytes() == b""
    assert applies(workspace, base, patch.diff_path) == (True, None)


def test_stats_equal_git_numstat(workspace: Path, base: str) -> None:
    (workspace / "src/app.py").write_text("import os\n\n\ndef greet(name):\n    return name\n")
    (workspace / "README.md").unlink()
    (workspace / "src/config/settings.py").write_text("TIMEOUT = 30\nRETRIES = 3\n" * 20)
    os.rename(workspace / "tests/test_app.py", workspace / "tests/test_greeting.py")
    (workspace / "notes.txt").write_text("a\nb\nc\n")
    patch = collect(workspace, base)
    git(workspace, "add", "-A")
    assert {c.path: (c.additions, c.deletions) for c in patch.changes} == _numstat(workspace, base)
    assert any(c.change_type is ChangeType.RENAMED for c in patch.changes)


def test_a_listing_longer_than_one_read_gives_every_file_and_the_patch_after_it(
        workspace: Path, base: str) -> None:
    """git's listing and the patch come in one output, read in chunks: fields that straddle a
    chunk's end, and the patch right after the listing, come out whole."""
    folder = workspace / ("a-rather-long-folder-name-" * 3)
    folder.mkdir()
    for number in range(700):
        (folder / f"file-{number:04}-{'x' * 40}.txt").write_text(f"{number}\n")
    os.rename(workspace / "tests/test_app.py", workspace / "tests/test_greeting.py")
    patch = collect(workspace, base)
    git(workspace, "add", "-A")
    assert len(patch.changes) == 701
    assert {c.path: (c.additions, c.deletions) for c in patch.changes} == _numstat(workspace, base)
    assert patch.diff_path.read_text() == git(workspace, "diff", "--cached", "--binary",
                                              "--full-index", "-M", base) + "\n"
    assert applies(workspace, base, patch.diff_path) == (True, None)


def _numstat(workspace: Path, base: str) -> dict[str, tuple[int, int]]:
    """Per path (added, removed) from `git diff --numstat -z`, renames under their new path."""
    fields = iter(git(workspace, "diff", "--cached", "--numstat", "-z", "-M", base).split("\0"))
    out: dict[str, tuple[int, int]] = {}
    for field in fields:
        if not field:
            continue
        added, removed, path = field.split("\t")
        if not path:  # a rename: the old and the new path follow
            next(fields)
            path = next(fields)
        out[path] = (int(added), int(removed))
    return out


def test_collecting_leaves_the_workspace_index_and_status_alone(workspace: Path, base: str) -> None:
    (workspace / "src/app.py").write_text("changed\n")
    (workspace / "untracked.txt").write_text("new\n")
    status = git(workspace, "status", "--porcelain")
    first = collect(workspace, base)
    assert git(workspace, "status", "--porcelain") == status
    second = collect(workspace, base)
    assert first.changes == second.changes and first.diff_lines == second.diff_lines


def test_a_fresh_patch_applies_to_its_base(workspace: Path, base: str) -> None:
    (workspace / "src/app.py").write_text("def greet(name):\n    return f'hi {name}'\n")
    (workspace / "src/extra.py").write_text("X = 1\n")
    patch = collect(workspace, base)
    assert applies(workspace, base, patch.diff_path) == (True, None)
    assert git(workspace, "status", "--porcelain") == "M src/app.py\n?? src/extra.py"


def test_the_tree_base_plus_patch_gives_is_the_collected_one_and_no_index_is_left_changed(
        workspace: Path, base: str) -> None:
    (workspace / "src/app.py").write_text("def greet(name):\n    return f'hi {name}'\n")
    (workspace / "README.md").unlink()
    (workspace / "src/deep/er").mkdir(parents=True)
    (workspace / "src/deep/er/new.py").write_text("X = 1\n")
    patch = collect(workspace, base)
    dirs = dirs_of(workspace)
    index = dirs.index.read_bytes()
    scratch = workspace.parent / "apply.index"
    assert patched_tree(dirs.git, base, patch.diff_path, scratch) == (patch.tree, None)
    assert dirs.index.read_bytes() == index and not scratch.exists()


def test_the_paths_the_listing_names_are_the_ones_gits_parser_reads_in_its_diff(
        workspace: Path, base: str) -> None:
    """What the collection step hands on (so the patch's tree is reckoned without git parsing
    the diff again): renames' sources, quoted names and names that are not UTF-8, as bytes."""
    os.rename(workspace / "README.md", workspace / 'docs "b"\tREAD ME.md')
    (workspace / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n")
    (workspace / "src/app.py").write_text("def greet(name):\n    return f'hi {name}'\n")
    (workspace / "src/config").mkdir(exist_ok=True)
    (workspace / "src/config/new.py").write_text("X = 1\n")
    patch = collect(workspace, base)
    dirs = dirs_of(workspace)
    assert patch.named == diff_paths(dirs.git, patch.diff_path)
    assert b"caf\xe9.txt" in patch.named and b"README.md" in patch.named
    assert patched_tree(dirs.git, base, patch.diff_path, workspace.parent / "apply.index",
                        named=patch.named) == (patch.tree, None)


def test_a_patch_given_fewer_paths_than_it_names_is_refused_not_miscounted(
        workspace: Path, base: str) -> None:
    """The paths handed on are trusted only as far as git and the reckoning check them: a
    changed or removed path left out is missing from the index (git refuses the patch), a new
    one's folder was never read (an infrastructure failure), never a wrong tree."""
    (workspace / "src/app.py").write_text("def greet(name):\n    return f'hi {name}'\n")
    (workspace / "README.md").unlink()
    patch = collect(workspace, base)
    dirs = dirs_of(workspace)
    tree, error = patched_tree(dirs.git, base, patch.diff_path, workspace.parent / "a.index",
                               named={b"src/app.py"})
    assert tree is None and error is not None and "README.md" in error
    (workspace / "src/deep").mkdir()
    (workspace / "src/deep/new.py").write_text("X = 1\n")
    patch = collect(workspace, base)
    with pytest.raises(InfrastructureFailure, match="src/deep/new.py"):
        patched_tree(dirs.git, base, patch.diff_path, workspace.parent / "b.index",
                     named={b"src/app.py", b"README.md"})


def test_a_patch_whose_context_does_not_match_the_base_does_not_apply(
    repo: Path, workspace: Path, base: str,
) -> None:
    (workspace / "src/app.py").write_text("def greet(name):\n    return f'hi {name}'\n")
    patch = collect(workspace, base)
    (repo / "src/app.py").write_text("def welcome(person):\n    return person\n")
    git(repo, "commit", "-q", "-am", "rewrite app")
    base_copy = dirs_of(workspace).base
    git(base_copy, "fetch", "-q", str(repo), "HEAD")
    moved = git(base_copy, "rev-parse", "FETCH_HEAD")
    applied, error = applies(workspace, moved, patch.diff_path)
    assert not applied
    assert error is not None and "src/app.py" in error and "\n" not in error


@pytest.mark.parametrize(("target", "why"), [
    ("../../../etc/passwd", "points outside the workspace"),
    ("/etc/passwd", "points outside the workspace"),
    ("../.github/workflows/deploy.yml", "points into forbidden .github/**"),
    ("../.git/config", "points into .git"),
])
def test_a_symlink_whose_target_leaves_the_boundary_fails_it(
        workspace: Path, base: str, target: str, why: str) -> None:
    (workspace / "src/link").symlink_to(target)
    patch = collect(workspace, base)
    change = only(patch)
    assert change.link_target is not None
    check = check_boundary(patch.changes, BOUNDARY)
    assert check.forbidden_path_violations == ("src/link",)
    assert why in check.reasons()[0]


def test_a_symlink_inside_the_workspace_passes_the_boundary(workspace: Path, base: str) -> None:
    (workspace / "src/alias.py").symlink_to("app.py")
    patch = collect(workspace, base)
    assert only(patch).link_target == "src/app.py"
    assert check_boundary(patch.changes, BOUNDARY).passed


DROPPINGS = PatchBoundary(
    allowed_paths=(), forbidden_paths=(), lockfile_patterns=(), generated_patterns=(),
    ignore_generated=("__pycache__", "*.pyc", ".pytest_cache", "node_modules", "/target"),
)


def test_files_tools_leave_behind_are_left_out_of_the_patch_and_listed(
        workspace: Path, base: str) -> None:
    """A repository without a .gitignore: running the tests leaves bytecode and caches."""
    (workspace / "src" / "__pycache__").mkdir()
    (workspace / "src" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\x00\x01pyc")
    (workspace / ".pytest_cache" / "v").mkdir(parents=True)
    (workspace / ".pytest_cache" / "v" / "lastfailed").write_text("{}")
    (workspace / "target" / "classes").mkdir(parents=True)
    (workspace / "target" / "classes" / "A.class").write_bytes(b"\xca\xfe\xba\xbe\x00")
    (workspace / "src" / "app.py").write_text("def greet(name):\n    return f'hi {name}'\n")
    patch = collect(workspace, base, DROPPINGS)
    assert [c.path for c in patch.changes] == ["src/app.py"]
    assert sorted(patch.excluded) == [".pytest_cache/v/lastfailed",
                                      "src/__pycache__/app.cpython-311.pyc",
                                      "target/classes/A.class"]
    assert ".pyc" not in patch.diff_path.read_text(errors="replace")
    assert applies(workspace, base, patch.diff_path) == (True, None)


def test_droppings_gitignore_keeps_out_are_not_listed_as_excluded(
        workspace: Path, base: str) -> None:
    """Excluded lists what would otherwise have been in the patch: bytecode the repository's
    .gitignore already keeps out is not part of it either way."""
    (workspace / ".gitignore").write_text("__pycache__/\n")
    (workspace / "src" / "__pycache__").mkdir()
    (workspace / "src" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\x00\x01pyc")
    (workspace / "src" / "stray.pyc").write_bytes(b"\x00\x02pyc")
    patch = collect(workspace, base, DROPPINGS)
    assert [c.path for c in patch.changes] == [".gitignore"]
    assert patch.excluded == ("src/stray.pyc",)


def test_a_dropping_git_pairs_with_a_deleted_file_as_its_rename_is_still_left_out(
        workspace: Path, base: str) -> None:
    """git lists a new file as the target of a rename when a deleted file looks like it: it is
    new all the same, and a dropping; the deleted file stays deleted."""
    os.rename(workspace / "src" / "app.py", workspace / "src" / "app.pyc")
    patch = collect(workspace, base, DROPPINGS)
    assert patch.excluded == ("src/app.pyc",)
    assert [(c.path, c.change_type) for c in patch.changes] == [
        ("src/app.py", ChangeType.DELETED)]
    assert applies(workspace, base, patch.diff_path) == (True, None)


def test_a_change_to_a_tracked_file_under_an_ignored_name_stays_in_the_patch(
        repo: Path, tmp_path: Path) -> None:
    """Only new files are droppings: a change to one the base tracks is the agent's."""
    (repo / "src" / "app.pyc").write_bytes(b"\x00old")
    git(repo, "add", "src/app.pyc")
    git(repo, "commit", "-qm", "track bytecode")
    tracked = git(repo, "rev-parse", "HEAD")
    (tmp_path / "tracked").mkdir()
    dirs = create_attempt_dirs(tmp_path / "tracked")
    clone_at(str(repo), tracked, dirs, is_url=False)
    (dirs.tree / "src" / "app.pyc").write_bytes(b"\x00changed")
    patch = collect(dirs.tree, tracked, DROPPINGS)
    assert [c.path for c in patch.changes] == ["src/app.pyc"] and patch.excluded == ()


def test_any_other_binary_file_fails_the_boundary_unless_allow_binary_names_it(
        workspace: Path, base: str) -> None:
    (workspace / "logo.png").write_bytes(PNG)
    change = only(collect(workspace, base, DROPPINGS))
    check = check_boundary([change], DROPPINGS)
    assert not check.passed and check.unexpected_binary_files == ("logo.png",)
    assert check.reasons() == ["unexpected binary file logo.png (a binary the patch may hold is "
                               "named in [boundary] allow_binary)"]
    assert check_boundary([change], replace(DROPPINGS, allow_binary=("*.png",))).passed


@pytest.mark.parametrize("name", ["notes\n### Approvals\n<!--.md", "carriage\rreturn.txt",
                                  "tab\there.txt", "esc\x1b[31m.txt", "del\x7f.txt",
                                  "nel\x85### Approvals.md", "csi\x9b2J.txt",
                                  "line\u2028sep.md", "para\u2029sep.md",
                                  "invoice\u202egnp.exe", "iso\u2066late\u2069.txt"])
def test_a_file_named_with_a_control_character_is_a_boundary_finding(
    workspace: Path, base: str, name: str,
) -> None:
    (workspace / name).write_text("planted\n")
    patch = collect(workspace, base)
    assert only(patch).path == name and only(patch).forbidden_by_policy  # collected verbatim
    check = check_boundary(patch.changes, BOUNDARY)
    assert not check.passed and check.forbidden_path_violations == (name,)
    (reason,) = check.reasons()
    assert reason.startswith("patch touches forbidden path ") and "control character" in reason
    assert control_character(reason) is None, reason  # spelled out, one line
