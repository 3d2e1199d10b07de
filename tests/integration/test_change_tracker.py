"""Which call changed which file, on a real work tree and git: what changed while no call ran is
never credited to the next call, and it is named with every patched file no call changed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentctl.domain.enums import ChangeType
from agentctl.domain.step import ChangedFile
from agentctl.execution.agents.attribution import ChangeTracker
from agentctl.execution.agents.tree_stat import RACY_NS, tree_stat
from agentctl.execution.git import WorkspaceGit
from tests.conftest import make_repo


def tracker(tmp_path: Path) -> tuple[ChangeTracker, Path]:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "b.py": "B = 1\n"})
    (tmp_path / "home").mkdir()
    (tmp_path / "scratch").mkdir()
    git = WorkspaceGit(git_dir=repo / ".git", work_tree=repo, home=tmp_path / "home")
    return ChangeTracker(git, repo / ".git" / "index", tmp_path / "scratch"), repo


def test_a_write_between_calls_is_not_the_next_calls_and_is_named(tmp_path: Path) -> None:
    changes, repo = tracker(tmp_path)
    changes.prepare()
    (repo / "a.py").write_text("A = 2\n")  # the first call
    first = changes.changes()
    (repo / "late.txt").write_text("x\n")  # a job the first call left behind
    changes.prepare()
    (repo / "b.py").write_text("B = 2\n")  # the second call
    second = changes.changes()
    (repo / "after.txt").write_text("y\n")  # after the last call

    assert [(c.path, c.change_type) for c in first] == [("a.py", ChangeType.MODIFIED)]
    assert [(c.path, c.change_type) for c in second] == [("b.py", ChangeType.MODIFIED)]
    patched = ["a.py", "b.py", "late.txt", "after.txt", "by_no_call.txt"]
    assert changes.unattributed(patched) == ["after.txt", "by_no_call.txt", "late.txt"]


def test_files_credited_to_file_tools_are_not_unattributed(tmp_path: Path) -> None:
    changes, repo = tracker(tmp_path)
    changes.prepare()
    assert changes.changes() == []
    (repo / "c.py").write_text("C = 1\n")
    changes.credit([ChangedFile("c.py", ChangeType.ADDED, 1, 0)])
    changes.mark_stale()
    assert changes.unattributed(["c.py"]) == []


def test_with_no_snapshot_to_compare_the_patched_files_are_named_and_none_is_taken(
        tmp_path: Path) -> None:
    """No tracked call ran (a patch agent), or a file tool's credit made the snapshot stale:
    the tracker's index is left as it was (no `add -A` of the work tree)."""
    changes, repo = tracker(tmp_path)
    (repo / "a.py").write_text("A = 2\n")
    (repo / "new.py").write_text("N = 1\n")
    before = changes.index.read_bytes()
    assert changes.unattributed(["a.py", "new.py"]) == ["a.py", "new.py"]
    assert changes.index.read_bytes() == before
    changes.credit([ChangedFile("a.py", ChangeType.MODIFIED, 1, 1)])
    changes.mark_stale()
    assert changes.unattributed(["a.py", "new.py"]) == ["new.py"]
    assert changes.index.read_bytes() == before


def _settled() -> None:
    """Past the racy window: what was written before is older than a listing's tick."""
    time.sleep(RACY_NS / 1e9 + 0.02)


def test_a_listing_is_trusted_only_past_the_racy_window_and_sees_a_same_size_rewrite(
        tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("one\n")
    soon = time.time_ns() + 10**9  # a time within any listing's tick, however loaded
    os.utime(tmp_path / "d" / "f.txt", ns=(soon, soon))
    assert (fresh := tree_stat(tmp_path)) is not None and not fresh.stable
    os.utime(tmp_path / "d" / "f.txt", ns=(soon - 3 * 10**9, soon - 3 * 10**9))
    _settled()
    first, again = tree_stat(tmp_path), tree_stat(tmp_path)
    assert first is not None and first.stable and again is not None
    assert again.entries == first.entries and set(first.entries) == {"d", "d/f.txt"}
    kept = (tmp_path / "d" / "f.txt").stat()
    (tmp_path / "d" / "f.txt").write_text("two\n")  # same size, its times put back
    os.utime(tmp_path / "d" / "f.txt", ns=(kept.st_atime_ns, kept.st_mtime_ns))
    after = tree_stat(tmp_path)
    assert after is not None and after.entries != first.entries  # its ctime moved


def test_a_listing_skips_the_top_git_only_and_gives_up_past_its_limit(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("x\n")
    (tmp_path / "sub" / ".git").mkdir(parents=True)
    (tmp_path / "sub" / ".git" / "HEAD").write_text("x\n")
    listed = tree_stat(tmp_path)
    assert listed is not None and sorted(listed.entries) == ["sub", "sub/.git", "sub/.git/HEAD"]
    assert tree_stat(tmp_path, limit=2) is None


def test_an_unchanged_tree_is_snapshotted_without_git_and_any_change_still_is(
        tmp_path: Path) -> None:
    changes, repo = tracker(tmp_path)
    changes.prepare()
    (repo / "a.py").write_text("A = 3\n")  # same size, right after the snapshot: racy
    assert [c.path for c in changes.changes()] == ["a.py"]
    _settled()
    changes.prepare()
    tree = changes.tree
    hidden = tmp_path / "git-away"
    (repo / ".git").rename(hidden)  # any git would fail now (and leave no tree)
    assert changes.changes() == [] and changes.tree == tree  # nothing changed: no git ran
    (hidden).rename(repo / ".git")
    kept = (repo / "b.py").stat()
    (repo / "b.py").write_text("B = 3\n")  # same size and mtime, long after the listing
    os.utime(repo / "b.py", ns=(kept.st_atime_ns, kept.st_mtime_ns))
    assert [c.path for c in changes.changes()] == ["b.py"]
