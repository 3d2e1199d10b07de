"""Workspaces: a private clone at the base commit that never touches the user's repository."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.workspaces.clones import (
    BASE_REF,
    borrowing_repository,
    copy_source,
    holds_object,
)
from agentctl.execution.workspaces.discard import remove_workspace
from agentctl.execution.workspaces.workspace import (
    CloneCancelled,
    clone_at,
    create_attempt_dirs,
)
from tests.conftest import git, make_repo


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    """A repository whose branch tip is one commit ahead of the base, with local changes."""
    repo = make_repo(tmp_path / "user", {"app.py": "VERSION = 1\n", "docs/guide.md": "# guide\n"})
    git(repo, "tag", "base")
    (repo / "app.py").write_text("VERSION = 2\n")
    git(repo, "commit", "-q", "-am", "tip")
    (repo / "app.py").write_text("VERSION = 3  # uncommitted\n")
    (repo / "notes.txt").write_text("untracked\n")
    return repo


def clone_into(tmp_path: Path, source: str, commit: str, **options: object) -> Path:
    """A fresh attempt's work tree, cloned at `commit`."""
    dirs = create_attempt_dirs(tmp_path)
    clone_at(source, commit, dirs, **options)  # type: ignore[arg-type]
    return dirs.tree


def _snapshot(repo: Path) -> dict[str, object]:
    index = repo / ".git" / "index"
    return {
        "index": (index.stat().st_mtime_ns, index.read_bytes()),
        "config": (repo / ".git" / "config").read_bytes(),
        "files": {
            p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts
        },
    }


def _describe(repo: Path) -> dict[str, str]:
    return {
        "head": git(repo, "rev-parse", "HEAD"),
        "symbolic": git(repo, "symbolic-ref", "HEAD"),
        "refs": git(repo, "for-each-ref"),
        "stash": git(repo, "stash", "list"),
        "status": git(repo, "status", "--porcelain"),
    }


def test_clone_is_checked_out_at_the_given_commit_not_the_branch_tip(
    user_repo: Path, tmp_path: Path,
) -> None:
    base = git(user_repo, "rev-parse", "base")
    dest = clone_into(tmp_path, str(user_repo), base, is_url=False)
    assert git(dest, "rev-parse", "HEAD") == base
    assert (dest / "app.py").read_text() == "VERSION = 1\n"
    assert git(dest, "status", "--porcelain") == ""
    assert git(dest, "rev-parse", "--abbrev-ref", "HEAD") == "HEAD"  # detached
    assert not (dest / "notes.txt").exists()


def test_cloned_files_are_not_hardlinks_of_the_users_work_tree(
    user_repo: Path, tmp_path: Path,
) -> None:
    dest = clone_into(tmp_path, str(user_repo), git(user_repo, "rev-parse", "HEAD"), is_url=False)
    for name in ("app.py", "docs/guide.md"):
        assert (dest / name).stat().st_ino != (user_repo / name).stat().st_ino
        assert (dest / name).stat().st_nlink == 1


def test_clone_leaves_the_users_repository_untouched(user_repo: Path, tmp_path: Path) -> None:
    (user_repo / "docs" / "guide.md").write_text("# stashed\n")
    git(user_repo, "stash", "push", "-q", "docs/guide.md")
    described = _describe(user_repo)  # `git status` may refresh the index: look before snapshotting
    before = _snapshot(user_repo)
    clone_into(tmp_path, str(user_repo), git(user_repo, "rev-parse", "base"), is_url=False)
    assert _snapshot(user_repo) == before
    assert _describe(user_repo) == described


def test_clone_uses_no_alternates_and_keeps_no_remote_to_the_users_repository(
    user_repo: Path, tmp_path: Path,
) -> None:
    dest = clone_into(tmp_path, str(user_repo), git(user_repo, "rev-parse", "HEAD"), is_url=False)
    assert not (dest / ".git" / "objects" / "info" / "alternates").exists()
    assert git(dest, "remote") == ""
    assert git(dest, "fsck", "--connectivity-only", "--no-dangling") == ""


def test_git_variables_in_the_environment_do_not_redirect_the_clone(
    user_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GIT_DIR", str(user_repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(user_repo))
    monkeypatch.setenv("GIT_INDEX_FILE", str(user_repo / ".git" / "index"))
    before = _snapshot(user_repo)
    base = git(user_repo, "rev-parse", "base")
    dest = clone_into(tmp_path, str(user_repo), base, is_url=False)
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert git(dest, "rev-parse", "HEAD") == base
    assert _snapshot(user_repo) == before


def test_the_users_global_hooks_do_not_run_in_the_workspace(
    user_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    hooks, marker = tmp_path / "hooks", tmp_path / "hook-ran"
    hooks.mkdir()
    (hooks / "post-checkout").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (hooks / "post-checkout").chmod(0o755)
    (tmp_path / "gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    clone_into(tmp_path, str(user_repo), git(user_repo, "rev-parse", "HEAD"), is_url=False)
    assert not marker.exists()


def test_missing_commit_raises_infrastructure_failure_naming_it(
    user_repo: Path, tmp_path: Path,
) -> None:
    missing = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(InfrastructureFailure, match=f"cannot check out commit {missing}") as error:
        clone_into(tmp_path, str(user_repo), missing, is_url=False)
    assert "\n" not in str(error.value)


def test_missing_source_raises_infrastructure_failure(tmp_path: Path) -> None:
    with pytest.raises(InfrastructureFailure, match="does not exist"):
        clone_into(tmp_path, str(tmp_path / "nowhere"), "0" * 40, is_url=False)


def test_a_source_that_is_not_a_repository_fails_with_gits_message(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(InfrastructureFailure, match="cannot clone .*plain: fatal: "):
        clone_into(tmp_path, str(tmp_path / "plain"), "0" * 40, is_url=False)


def test_a_commit_that_is_not_a_sha_is_refused_before_git_runs(
    user_repo: Path, tmp_path: Path,
) -> None:
    with pytest.raises(InfrastructureFailure, match="invalid commit id '--upload-pack=x'"):
        clone_into(tmp_path, str(user_repo), "--upload-pack=x", is_url=False)
    assert not (tmp_path / "ws").exists()


def test_url_clone_fetches_the_commit(user_repo: Path, tmp_path: Path) -> None:
    base = git(user_repo, "rev-parse", "base")
    dest = clone_into(tmp_path, f"file://{user_repo}", base, is_url=True)
    assert git(dest, "rev-parse", "HEAD") == base
    assert git(dest, "rev-parse", "--is-shallow-repository") == "true"  # just that commit
    assert (dest / "app.py").read_text() == "VERSION = 1\n"


def test_url_clone_of_an_unknown_commit_fails(user_repo: Path, tmp_path: Path) -> None:
    with pytest.raises(InfrastructureFailure, match="cannot check out commit"):
        clone_into(tmp_path, f"file://{user_repo}", "ab" * 20, is_url=True)


def test_cancelling_stops_a_clone_that_is_still_running(user_repo: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    head = git(user_repo, "rev-parse", "HEAD")
    fifo = tmp_path / "trace"
    os.mkfifo(fifo)
    monkeypatch.setenv("GIT_TRACE", str(fifo))  # git blocks opening a fifo nobody reads
    with pytest.raises(CloneCancelled):
        clone_into(tmp_path, str(user_repo), head, is_url=False, should_stop=lambda: True)


def test_workspace_dir_is_private(tmp_path: Path) -> None:
    path = create_attempt_dirs().root
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
        assert path.name.startswith("agentctl-ws-")
    finally:
        remove_workspace(path)


def test_remove_workspace_removes_read_only_trees(user_repo: Path, tmp_path: Path) -> None:
    dest = clone_into(tmp_path, str(user_repo), git(user_repo, "rev-parse", "HEAD"), is_url=False)
    locked = dest / "locked"
    (locked / "deeper").mkdir(parents=True)
    (locked / "deeper" / "file.txt").write_text("x")
    (locked / "file.txt").write_text("x")
    for path in (locked / "deeper" / "file.txt", locked / "file.txt"):
        path.chmod(0o444)
    (locked / "deeper").chmod(0o000)
    locked.chmod(0o500)
    remove_workspace(dest)
    assert not dest.exists()


def test_remove_workspace_ignores_a_missing_directory(tmp_path: Path) -> None:
    remove_workspace(tmp_path / "never-created")


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_a_repository_that_borrows_a_bases_objects_is_the_one_git_makes(
        user_repo: Path, tmp_path: Path, object_format: str) -> None:
    """Written by hand, it is read as `git init --bare --template=`, the alternates file and
    `git update-ref` make it: a bare repository, HEAD on its branch at the commit, the same
    local config (a SHA-256 base's object format declared), nothing missing for fsck, and new
    objects written to its own folder."""
    if object_format == "sha256":
        user_repo = tmp_path / "sha256"
        git(tmp_path, "init", "-q", "--object-format=sha256", str(user_repo))
        (user_repo / "calc.py").write_text("VALUE = 1\n")
        git(user_repo, "add", "-A")
        git(user_repo, "-c", "user.name=t", "-c", "user.email=t@example.com",
            "commit", "-q", "-m", "base")
    commit = git(user_repo, "rev-parse", "HEAD")
    objects = user_repo / ".git" / "objects"
    by_hand, by_git = tmp_path / "by-hand.git", tmp_path / "by-git.git"
    borrowing_repository(by_hand, commit, objects)
    git(tmp_path, "init", "-q", "--bare", "--template=", f"--object-format={object_format}",
        str(by_git))
    (by_git / "objects" / "info" / "alternates").write_text(f"{objects}\n")
    git(by_git, "update-ref", "refs/heads/agentctl-base", commit)
    git(by_git, "symbolic-ref", "HEAD", "refs/heads/agentctl-base")
    for made in (by_hand, by_git):
        assert git(made, "rev-parse", "--is-bare-repository", "HEAD") == f"true\n{commit}"
        assert git(made, "config", "--local", "--list") == git(by_git, "config", "--local",
                                                              "--list")
        git(made, "fsck", "--no-progress", "--connectivity-only")
    blob = subprocess.run(["git", "-C", str(by_hand), "hash-object", "-w", "--stdin"],
                          input="new\n", capture_output=True, text=True, check=True).stdout.strip()
    assert (by_hand / "objects" / blob[:2] / blob[2:]).is_file()
    assert not (objects / blob[:2] / blob[2:]).exists()
    with pytest.raises(InfrastructureFailure, match="invalid commit id"):
        borrowing_repository(tmp_path / "bad.git", "main", objects)


@pytest.mark.parametrize("packed", [False, True])
def test_the_bare_copys_branch_is_the_one_git_update_ref_writes(
        user_repo: Path, tmp_path: Path, packed: bool) -> None:
    """Written without git where the copy holds the commit (loose, or packed: found through
    the pack's index), it is read as `git update-ref` makes it, and wins over a branch of the
    same name in the source; a commit the copy lacks is still reported by git."""
    base = git(user_repo, "rev-parse", "base")
    git(user_repo, "branch", "agentctl-base", "HEAD")  # the source's own, elsewhere
    if packed:
        git(user_repo, "gc", "-q")
        assert not (user_repo / ".git" / "objects" / base[:2] / base[2:]).exists()
    copy = tmp_path / "copy.git"
    copy_source(str(user_repo), base, copy, is_url=False, home=tmp_path / "home",
                should_stop=None)
    assert (copy / BASE_REF).read_text() == f"{base}\n"
    assert git(copy, "rev-parse", "agentctl-base") == base
    git(copy, "fsck", "--no-progress", "--connectivity-only")
    missing = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(InfrastructureFailure, match=f"cannot check out commit {missing}"):
        copy_source(str(user_repo), missing, tmp_path / "missing.git", is_url=False,
                    home=tmp_path / "home", should_stop=None)


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_an_object_folder_holds_each_object_git_lists_loose_or_packed(
        tmp_path: Path, object_format: str) -> None:
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", f"--object-format={object_format}", str(repo))
    for number in range(3):
        (repo / f"file{number}.txt").write_text(f"{number}\n")
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com",
            "commit", "-q", "-m", str(number))
    objects = repo / ".git" / "objects"
    for packed in (False, True):
        if packed:
            git(repo, "gc", "-q")
            assert not any(folder.name != "pack" and folder.name != "info"
                           for folder in objects.iterdir())
        names = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
        assert len(names.split()) == 9
        assert all(holds_object(objects, name) for name in names.split())
        for name in names.split():  # the same length, one digit off: not there
            other = name[:-1] + ("0" if name[-1] != "0" else "1")
            if other not in names.split():
                assert not holds_object(objects, other)
