"""Which call changed which file, on a real work tree and git: what changed while no call ran is
never credited to the next call, and it is named with every patched file no call changed."""

from __future__ import annotations

from pathlib import Path

from agentctl.domain.enums import ChangeType
from agentctl.domain.step import ChangedFile
from agentctl.execution.agents.attribution import ChangeTracker
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
