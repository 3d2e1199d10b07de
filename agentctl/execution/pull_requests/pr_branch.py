"""Creating a PR branch in the task's repository without touching the user's checkout.

The commit is built against a temporary index (read-tree of the base, `apply --cached` of the
patch, write-tree, commit-tree); it is pushed (when a remote is given) before the local branch
ref is created with a compare-and-set against "no such ref", so a failed push leaves nothing
behind. The user's working tree, index, HEAD and stash are never involved.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import git

from agentctl.domain.errors import BadInput, InfrastructureFailure

FALLBACK_IDENTITY = {"GIT_AUTHOR_NAME": "agentctl", "GIT_AUTHOR_EMAIL": "agentctl@localhost",
                     "GIT_COMMITTER_NAME": "agentctl", "GIT_COMMITTER_EMAIL": "agentctl@localhost"}
NO_REF = "0" * 40


def open_repository(repository: str, branch: str, *, reuse: bool = False) -> git.Repo:
    """The task's repository, after checking that `branch` is a valid branch name and new (or,
    with `reuse`, the branch this run's PR already has)."""
    try:
        repo = git.Repo(repository)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise BadInput(f"repository {repository} is not a git repository any more") from None
    try:
        repo.git.check_ref_format("--branch", branch)
    except git.GitCommandError:
        raise BadInput(f"invalid branch name {branch!r}") from None
    if not reuse and f"refs/heads/{branch}" in {ref.path for ref in repo.branches}:
        raise BadInput(f"branch {branch} already exists in {repository}; pass --branch NAME")
    return repo


def build_commit(repo: git.Repo, *, base_commit: str, patch: Path, message: str,
                 date: str) -> str:
    """A commit whose parent is `base_commit` and whose tree is the base plus the patch.

    Dated `date` (the verdict's time), so building it again gives the same commit: a retried
    `pr create` pushes what is already there instead of a rival commit.
    """
    identity = {} if _has_identity(repo) else FALLBACK_IDENTITY
    with tempfile.TemporaryDirectory(prefix="agentctl-pr-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index"), **identity,
               "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        try:
            repo.git.read_tree(base_commit, env=env)
            repo.git.apply("--cached", "--whitespace=nowarn", str(patch), env=env)
            tree = repo.git.write_tree(env=env)
            return str(repo.git.commit_tree(tree, "-p", base_commit, "-m", message, env=env))
        except git.GitCommandError as error:
            raise BadInput(f"cannot build the PR commit: {_first_line(error)}") from None


def tree_of(repo: git.Repo, commit: str) -> str:
    return str(repo.git.rev_parse(f"{commit}^{{tree}}"))


def push_commit(repo: git.Repo, remote: str, commit: str, branch: str) -> None:
    try:
        repo.git.push(remote, f"{commit}:refs/heads/{branch}")
    except git.GitCommandError as error:
        raise InfrastructureFailure(f"push of {branch} to {remote} failed: "
                                    f"{_first_line(error)}") from None


def create_branch(repo: git.Repo, branch: str, commit: str) -> None:
    """The local branch at `commit`: created if absent, left alone if already there."""
    try:
        if repo.git.rev_parse("--verify", "-q", f"refs/heads/{branch}", with_exceptions=False) \
                == commit:
            return
        repo.git.update_ref(f"refs/heads/{branch}", commit, NO_REF)
    except git.GitCommandError as error:
        raise BadInput(f"cannot create branch {branch}: {_first_line(error)}") from None


def remote_url(repo: git.Repo, remote: str) -> str:
    """The URL behind a remote's name; a URL or path is its own."""
    try:
        return str(repo.git.remote("get-url", remote))
    except git.GitCommandError:
        return remote


def _has_identity(repo: git.Repo) -> bool:
    reader = repo.config_reader()
    return bool(reader.get_value("user", "name", "")) and bool(reader.get_value("user", "email", ""))


def _first_line(error: Exception) -> str:
    text = (getattr(error, "stderr", "") or str(error)).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines[0] if lines else str(error)).removeprefix("stderr: ").strip("'")


def remote_url_in(repository: str, remote: str) -> str:
    """`remote_url` in the task's repository; the remote itself when that is not a repository."""
    try:
        return remote_url(git.Repo(repository), remote)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return remote
