"""The repository you stand in is found as git finds it: a `.git` that is a git dir or a
`gitdir:` file, never a stray empty `.git` folder above (one in /tmp made every read command
there say "no runs of /tmp")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentctl.execution.work_tree import enclosing_work_tree


def test_an_empty_git_folder_above_is_not_a_work_tree(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    inside = tmp_path / "a" / "b"
    inside.mkdir(parents=True)
    assert enclosing_work_tree(inside) != str(tmp_path)


def test_a_repository_and_a_linked_worktree_are_found_from_inside(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(tmp_path / "linked")],
                   check=True)
    (repo / "src").mkdir()
    assert enclosing_work_tree(repo / "src") == str(repo)
    assert (tmp_path / "linked" / ".git").is_file()
    assert enclosing_work_tree(tmp_path / "linked") == str(tmp_path / "linked")
