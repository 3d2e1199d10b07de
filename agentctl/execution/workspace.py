"""Throw-away git workspaces: a private directory per attempt, holding agentctl's own bare copy
of the base commit, the agent's work tree cloned from it, and (after the agent) a fresh
checkout where the patch alone is verified.

Writing the files dominates preparing a workspace, so clones copy objects without a checkout
and the work tree is then checked out in parallel (`checkout.workers=0`: one worker per core).
The user's repository is only ever read, once, into the bare copy; nothing of the agent's can
reach it or the bare copy through git (`--no-hardlinks`, and agentctl's git never runs in the
agent's `.git`: see `git.WorkspaceGit`).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.git import (
    GitCancelled,
    WorkspaceGit,
    copy_index,
    hardened_argv,
    hardened_env,
    one_line,
    run_git_process,
    trusted_git,
)

_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
BASE_REF = "refs/heads/agentctl-base"

__all__ = ["AttemptDirs", "CloneCancelled", "checkout_base", "checkout_patched", "clone_at",
           "create_attempt_dirs", "one_line", "remove_leftovers", "remove_workspace",
           "require_sha", "ATTEMPT_DIR_PREFIX"]

CloneCancelled = GitCancelled
ATTEMPT_DIR_PREFIX = "agentctl-ws-"


@dataclass(frozen=True, slots=True)
class AttemptDirs:
    """An attempt's private (0700) directory and what it holds."""

    root: Path

    @property
    def tree(self) -> Path:
        """The agent's work tree (a git clone of the base commit)."""
        return self.root / "repo"

    @property
    def scratch(self) -> Path:
        """Logs, the task file, tool output: outside the work tree, never in a patch."""
        return self.root / "scratch"

    @property
    def base(self) -> Path:
        """agentctl's bare copy of the base commit: the GIT_DIR of its own git calls."""
        return self.root / "base.git"

    @property
    def index(self) -> Path:
        """agentctl's index of the work tree, written right after the checkout (its stat
        cache spares re-hashing unchanged files when the patch is collected)."""
        return self.root / "index"

    @property
    def verify(self) -> Path:
        """A fresh checkout of the base commit with the patch applied: what is verified."""
        return self.root / "verify"

    @property
    def base_verify(self) -> Path:
        """A clean checkout of the base commit, where the plan runs for the baseline."""
        return self.root / "base-verify"

    @property
    def git(self) -> WorkspaceGit:
        return WorkspaceGit(git_dir=self.base, work_tree=self.tree, home=self.root / "git-home")


def require_sha(commit: str) -> str:
    """A commit id as git prints it; anything else is refused before it reaches a command line."""
    if not _SHA.fullmatch(commit):
        raise InfrastructureFailure(f"invalid commit id {commit!r}: expected a hexadecimal sha")
    return commit


def create_attempt_dirs(parent: Path | None = None) -> AttemptDirs:
    """A new private (0700) directory under `parent` (default: the system temp dir), symlinks
    resolved."""
    dirs = AttemptDirs(Path(tempfile.mkdtemp(prefix=ATTEMPT_DIR_PREFIX, dir=parent)).resolve())
    dirs.scratch.mkdir()
    (dirs.root / "git-home").mkdir()
    return dirs


def clone_at(source: str, commit: str, dirs: AttemptDirs, *, is_url: bool,
             should_stop: Callable[[], bool] | None = None) -> None:
    """The bare copy of `source` at `commit`, and the work tree checked out (HEAD detached) from
    it. The work tree keeps no remote: an agent's `git push` or `git fetch` reaches nothing.
    Raises InfrastructureFailure (CloneCancelled when `should_stop` fired)."""
    require_sha(commit)
    if is_url:
        _fetch_commit(source, commit, dirs.base, should_stop)
    else:
        if not Path(source).exists():
            raise InfrastructureFailure(f"cannot clone {source}: the repository does not exist")
        trusted_git(["clone", "--quiet", "--bare", "--no-hardlinks", "--", source,
                     str(dirs.base)], what=f"cannot clone {source}", should_stop=should_stop)
    # A branch of agentctl's own, so clones of the copy carry the base even when no branch of
    # the source points at it (a fetched commit, a tag, a reflog entry).
    base = WorkspaceGit(git_dir=dirs.base, work_tree=dirs.root, home=dirs.root / "git-home")
    base.run("update-ref", BASE_REF, commit, what=f"cannot check out commit {commit} of {source}")
    checkout = _clone_base(dirs, dirs.tree, should_stop)
    checkout.run("-c", "checkout.workers=0", "checkout", "--quiet", "--detach", commit,
                 what=f"cannot check out commit {commit} of {source}", should_stop=should_stop)
    copy_index(dirs.tree / ".git" / "index", dirs.index)


def checkout_patched(dirs: AttemptDirs, commit: str, diff: Path, *,
                     should_stop: Callable[[], bool] | None = None) -> str:
    """A fresh checkout of `commit` from agentctl's own copy, with the patch applied to its
    work tree and index, and nothing else of the agent's: where verification runs. The id of
    the tree it holds, for the caller to compare with the patch's."""
    require_sha(commit)
    checkout = _clone_base(dirs, dirs.verify, should_stop)
    checkout.run("-c", "checkout.workers=0", "checkout", "--quiet", "--detach", commit,
                 what=f"cannot check out commit {commit} for verification",
                 should_stop=should_stop)
    if diff.stat().st_size:
        checkout.run("apply", "--index", "--whitespace=nowarn", str(diff.resolve()),
                     what="cannot apply the patch to a fresh checkout", should_stop=should_stop)
    return checkout.run("write-tree", what="cannot write the verified tree").stdout.strip()


def checkout_base(dirs: AttemptDirs, commit: str, *,
                  should_stop: Callable[[], bool] | None = None, dest: Path | None = None) -> Path:
    """A clean checkout of `commit` from agentctl's own copy at `dest` (default
    `dirs.base_verify`), made unless it is there already: the baseline runs there, as the
    patch's checks run on `checkout_patched`."""
    require_sha(commit)
    where = dest or dirs.base_verify
    if not where.exists():
        checkout = _clone_base(dirs, where, should_stop)
        checkout.run("-c", "checkout.workers=0", "checkout", "--quiet", "--detach", commit,
                     what=f"cannot check out commit {commit} for the baseline",
                     should_stop=should_stop)
    return where


def _clone_base(dirs: AttemptDirs, dest: Path,
                should_stop: Callable[[], bool] | None) -> WorkspaceGit:
    """A clone of agentctl's bare copy at `dest` (objects copied, not linked), without a
    remote, and git for it that reads nothing but its own fresh config."""
    home = dirs.root / "git-home"
    # The one transport agentctl's own git may use: a local clone of its own copy.
    run_git_process(hardened_argv("-c", "protocol.file.allow=always", "clone", "--quiet",
                                  "--no-checkout", "--no-hardlinks", "--", str(dirs.base),
                                  str(dest)), env=hardened_env(home),
                    what=f"cannot clone the base into {dest}", should_stop=should_stop)
    clone = WorkspaceGit(git_dir=dest / ".git", work_tree=dest, home=home)
    clone.run("remote", "remove", "origin", what=f"cannot detach {dest} from its origin")
    return clone


def _fetch_commit(url: str, commit: str, base: Path,
                  should_stop: Callable[[], bool] | None) -> None:
    """Just the commit when the server lets us ask for it by id; else every branch and tag."""
    trusted_git(["init", "--quiet", "--bare", str(base)], what=f"cannot create {base}")
    shallow = trusted_git(["-C", str(base), "fetch", "--quiet", "--no-tags", "--depth=1", "--",
                           url, commit], what=f"cannot fetch {commit} from {url}", check=False,
                          should_stop=should_stop)
    if shallow.returncode == 0:
        return
    trusted_git(["-C", str(base), "fetch", "--quiet", "--", url,
                 "+refs/heads/*:refs/remotes/source/*", "+refs/tags/*:refs/tags/*"],
                what=f"cannot fetch {url}", should_stop=should_stop)


def remove_workspace(path: Path) -> None:
    """Delete the workspace, read-only files and directories included; a missing one is fine."""
    if not os.path.lexists(path):
        return
    try:
        _rmtree(str(path))
    except OSError as error:
        raise InfrastructureFailure(f"cannot remove workspace {path}: {error}") from None


def remove_leftovers(directories: Iterable[str]) -> None:
    """Remove dead attempts' directories that are on this machine; one that cannot be removed
    is left for the next sweep (a sweep never stops a worker)."""
    for directory in directories:
        try:
            remove_workspace(Path(directory))
        except InfrastructureFailure:
            continue


def _rmtree(path: str) -> None:
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
    elif sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_force)
    else:
        shutil.rmtree(path, onerror=_force)


def _force(_func: object, path: str, error: object) -> None:
    """rmtree failed on `path`: make it and its directory writable (and listable), then retry."""
    exc = error[1] if isinstance(error, tuple) else error
    if isinstance(exc, FileNotFoundError):
        return
    loosened = False
    for target in (os.path.dirname(path), path):
        if os.path.isdir(target) and not os.path.islink(target):
            mode = stat.S_IMODE(os.lstat(target).st_mode)
            if mode & stat.S_IRWXU != stat.S_IRWXU:
                os.chmod(target, mode | stat.S_IRWXU)
                loosened = True
    if not loosened:  # permissions were not the problem: retrying would loop forever
        raise exc if isinstance(exc, BaseException) else OSError(f"cannot remove {path}")
    if os.path.lexists(path):
        _rmtree(path)
