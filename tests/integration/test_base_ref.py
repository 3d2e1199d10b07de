"""The commit a task's base ref names, in a real repository: every revision syntax git reads,
peeled to a commit, in one git call where `^{commit}` can follow the ref, else in two."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.domain.errors import BadInput
from agentctl.execution.task_repository import (
    ResolvedRepository,
    commit_of,
    default_base,
    default_base_ref,
    resolve_repository,
)
from tests.conftest import git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    (repo / "a.py").write_text("A = 2\n")
    git(repo, "commit", "-q", "-am", "the second: with a word to find")
    git(repo, "tag", "-a", "-m", "annotated", "v2")
    git(repo, "tag", "light", "HEAD~1")
    return repo


@pytest.mark.parametrize("ref, expected", [
    ("HEAD", "HEAD"), ("v2", "HEAD"), ("light", "HEAD~1"), ("HEAD~1", "HEAD~1"),
    (":/word to find", "HEAD"), ("HEAD@{1}", "HEAD@{1}"),
])
def test_a_base_ref_names_its_commit_tags_peeled(repo: Path, ref: str, expected: str) -> None:
    assert commit_of(str(repo), ref) == git(repo, "rev-parse", f"{expected}^{{commit}}")


@pytest.mark.parametrize("ref", ["HEAD^{tree}", "HEAD:a.py", "no-such-branch", "HEAD:"])
def test_a_base_ref_that_is_no_commit_is_refused_in_one_line(repo: Path, ref: str) -> None:
    with pytest.raises(BadInput, match="does not exist in .* \\(or is not a commit\\)"):
        commit_of(str(repo), ref)


def _two_steps(found: ResolvedRepository) -> tuple[str, str]:
    """What the branch and its commit are found to be without the head read with the top."""
    plain = ResolvedRepository(found.location, is_url=False)
    ref = default_base_ref(plain)
    return ref, commit_of(found.location, ref)


def test_the_branch_and_its_commit_are_read_with_the_repository_as_two_steps_read_them(
        repo: Path, tmp_path: Path) -> None:
    """One git finds the work tree, its branch and the branch's commit; a branch whose short
    name a tag shares is named as `symbolic-ref --short` names it (`heads/main`)."""
    found = resolve_repository(str(repo / "a.py"), {}, tmp_path)
    assert found.head == _two_steps(found) == ("main", git(repo, "rev-parse", "main"))
    assert default_base(found) == found.head
    git(repo, "tag", "main", "HEAD~1")
    found = resolve_repository(str(repo), {}, tmp_path)
    assert found.head == _two_steps(found) == ("heads/main", git(repo, "rev-parse", "HEAD"))


def test_a_detached_or_unborn_head_is_found_in_two_steps_and_refused_as_before(
        repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    found = resolve_repository(str(repo), {}, tmp_path)
    assert found.head is None and found.location == str(repo.resolve())
    with pytest.raises(BadInput, match="is on a detached HEAD; pass --base REF"):
        default_base(found)
    unborn = tmp_path / "unborn"
    git(tmp_path, "init", "-q", "-b", "trunk", str(unborn))
    found = resolve_repository(str(unborn), {}, tmp_path)
    assert found.head is None and found.location == str(unborn.resolve())
    with pytest.raises(BadInput, match="base ref 'trunk' does not exist"):
        default_base(found)
