"""The commit a task's base ref names, in a real repository: every revision syntax git reads,
peeled to a commit, in one git call where `^{commit}` can follow the ref, else in two."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.domain.errors import BadInput
from agentctl.execution.task_repository import commit_of
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
