"""`task submit --test-patch FILE` (and `testPatch` in a request file), with the installed
command: the diff is stored with the task; a file that is missing, is not a diff or does not
apply to the base is one line on stderr, exit 2, and no task."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, git, make_repo

Cli = Callable[..., Result]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {
        "calc.py": "def sub(a, b):\n    return a + b\n",
        "tests/test_calc.py": "from calc import sub\n"})


@pytest.fixture
def test_patch(repo: Path, tmp_path: Path) -> Path:
    """A diff adding a test to the repository's test file (the repository stays committed)."""
    (repo / "tests/test_calc.py").write_text(
        "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n")
    path = tmp_path / "test.diff"
    path.write_text(git(repo, "diff") + "\n")
    git(repo, "checkout", "--", "tests/test_calc.py")
    return path


def submit(agentctl: Cli, repo: Path, *extra: str) -> Result:
    return agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                    "--instruction", "Fix sub", *extra, "--json")


def no_task(agentctl: Cli) -> bool:
    return agentctl("task", "list", "--json").json() == []


def test_the_test_patch_is_stored_with_the_task(agentctl: Cli, repo: Path,
                                                test_patch: Path) -> None:
    result = submit(agentctl, repo, "--test-patch", str(test_patch))
    assert result.returncode == 0, result.stderr
    task = result.json()
    assert isinstance(task, dict)
    assert task["testPatch"] == test_patch.read_text()
    shown = agentctl("task", "show", task["taskId"])
    assert "test patch" in shown.stdout


def test_a_request_files_test_patch_is_read_beside_the_file(
        agentctl: Cli, repo: Path, test_patch: Path, tmp_path: Path) -> None:
    request = tmp_path / "task.json"
    request.write_text(json.dumps({"repository": str(repo), "taskType": "bug_fix",
                                   "instruction": "Fix sub", "testPatch": test_patch.name}))
    result = agentctl("task", "submit", "--file", str(request), "--json")
    assert result.returncode == 0, result.stderr
    task = result.json()
    assert isinstance(task, dict) and task["testPatch"] == test_patch.read_text()


def test_a_missing_test_patch_is_one_line_and_exit_2(agentctl: Cli, repo: Path,
                                                     tmp_path: Path, error_line) -> None:
    result = submit(agentctl, repo, "--test-patch", str(tmp_path / "absent.diff"))
    assert result.returncode == 2
    assert error_line(result.stderr).startswith(
        f"agentctl: error: cannot read test patch {tmp_path / 'absent.diff'}:")
    assert no_task(agentctl)


def test_a_test_patch_that_is_not_a_diff_is_one_line_and_exit_2(
        agentctl: Cli, repo: Path, tmp_path: Path, error_line) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("the test should check sub\n")
    result = submit(agentctl, repo, "--test-patch", str(text))
    assert result.returncode == 2
    assert error_line(result.stderr).startswith(
        f"agentctl: error: test patch {text} is not a diff git can apply")
    assert no_task(agentctl)


def test_a_test_patch_that_does_not_apply_to_the_base_is_one_line_and_exit_2(
        agentctl: Cli, repo: Path, test_patch: Path, error_line) -> None:
    (repo / "tests/test_calc.py").write_text("from calc import sub as minus\n")
    git(repo, "commit", "-qam", "the test file moves on")
    result = submit(agentctl, repo, "--test-patch", str(test_patch))
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert line.startswith(f"agentctl: error: test patch {test_patch} does not apply to the "
                           "base commit "), line
    assert "tests/test_calc.py" in line
    assert no_task(agentctl)
