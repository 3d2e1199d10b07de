"""Throw-away git workspaces: a private clone of the repository, checked out at the base commit.

Writing the files dominates preparing a workspace, so a local repository is cloned without a
checkout (git hardlinks its immutable objects, which outlive the user's gc, where `--shared`
alternates would not) and then checked out in parallel (`checkout.workers=0`: one worker per
core). The user's repository is only ever read.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agentctl.domain.errors import InfrastructureFailure

# `git rev-parse --local-env-vars`: variables that would point git at another repository, index or
# configuration than the one named on its command line (e.g. when agentctl runs inside a git hook).
_REPOSITORY_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
    "GIT_SHALLOW_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE",
)
_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
_POLL_SECONDS = 0.1
_MESSAGE_LIMIT = 400


class CloneCancelled(InfrastructureFailure):
    """Preparing the workspace was cancelled; the git process was killed."""


@dataclass(frozen=True, slots=True)
class GitResult:
    returncode: int
    stdout: str
    stderr: str


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment minus anything that would redirect git, plus `extra`."""
    env = {
        name: value for name, value in os.environ.items()
        if name not in _REPOSITORY_ENV
        and not name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env["GIT_TERMINAL_PROMPT"] = "0"  # a URL needing credentials fails instead of hanging the run
    env.update(extra or {})
    return env


def one_line(text: str) -> str:
    """git's stderr folded onto one line, bounded, for error messages and failure reports."""
    folded = " ".join(text.split())
    return folded if len(folded) <= _MESSAGE_LIMIT else folded[: _MESSAGE_LIMIT - 1] + "…"


def require_sha(commit: str) -> str:
    """A commit id as git prints it; anything else is refused before it reaches a command line."""
    if not _SHA.fullmatch(commit):
        raise InfrastructureFailure(f"invalid commit id {commit!r}: expected a hexadecimal sha")
    return commit


def run_git(
    args: Sequence[str], *, what: str, env: Mapping[str, str] | None = None,
    stdout: IO[bytes] | None = None, cwd: Path | None = None, check: bool = True,
    should_stop: Callable[[], bool] | None = None,
) -> GitResult:
    """Run `git ARGS` (no shell); raise InfrastructureFailure naming `what` and git's stderr.

    `stdout`, when given, receives git's output directly (a diff never passes through Python).
    `should_stop` is polled while git runs; when it turns true the whole process group is killed.
    """
    try:
        process = subprocess.Popen(
            ["git", *args], stdin=subprocess.DEVNULL,
            stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE,
            env=git_environment(env), cwd=cwd, start_new_session=True,
        )
    except OSError as error:
        raise InfrastructureFailure(f"{what}: cannot run git: {error}") from None
    out, err = _communicate(process, should_stop)
    result = GitResult(
        process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
    )
    if check and result.returncode != 0:
        detail = one_line(result.stderr) or f"git exited {result.returncode}"
        raise InfrastructureFailure(f"{what}: {detail}")
    return result


def _communicate(
    process: subprocess.Popen[bytes], should_stop: Callable[[], bool] | None,
) -> tuple[bytes, bytes]:
    try:
        while True:
            try:
                out, err = process.communicate(timeout=_POLL_SECONDS if should_stop else None)
                return out or b"", err or b""
            except subprocess.TimeoutExpired:
                if should_stop is not None and should_stop():
                    raise CloneCancelled("workspace preparation cancelled; git stopped") from None
    except BaseException:
        _kill_group(process)  # cancelled or Ctrl-C: in its own session, git would outlive us
        raise


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """git clone forks helpers (index-pack, remote helpers): stop the whole group, then reap."""
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        if process.returncode is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.communicate(timeout=grace)
        except subprocess.TimeoutExpired:
            continue


def create_workspace_dir() -> Path:
    """A new private (0700) directory under the system temp dir, symlinks resolved."""
    return Path(tempfile.mkdtemp(prefix="agentctl-ws-")).resolve()


def clone_at(
    source: str, commit: str, dest: Path, *, is_url: bool,
    should_stop: Callable[[], bool] | None = None,
) -> None:
    """Make `dest` (absent or empty) a git work tree with HEAD detached at `commit`.

    The clone keeps no remote: an agent's `git push` or `git fetch` in the workspace cannot reach
    the user's repository. Raises InfrastructureFailure (CloneCancelled when `should_stop` fired).
    """
    require_sha(commit)
    if is_url:
        _fetch_commit(source, commit, dest, should_stop)
    else:
        if not Path(source).exists():
            raise InfrastructureFailure(f"cannot clone {source}: the repository does not exist")
        # --no-hardlinks: the workspace gets its own copy of the objects, so nothing a command in
        # it does (chmod, write) can reach the user's repository; copying packs is cheap next to
        # writing the work tree.
        run_git(["clone", "--quiet", "--no-checkout", "--no-hardlinks", "--", source, str(dest)],
                what=f"cannot clone {source}", should_stop=should_stop)
        run_git(["-C", str(dest), "remote", "remove", "origin"],
                what=f"cannot detach the workspace from {source}")
    # The user's global hooks (core.hooksPath) have no business in a throw-away checkout.
    run_git(["-C", str(dest), "-c", "checkout.workers=0", "-c", "advice.detachedHead=false",
             "-c", "core.hooksPath=/dev/null", "checkout", "--quiet", "--detach", commit],
            what=f"cannot check out commit {commit} of {source}", should_stop=should_stop)


def _fetch_commit(
    url: str, commit: str, dest: Path, should_stop: Callable[[], bool] | None,
) -> None:
    """Just the commit when the server lets us ask for it by id; else every branch and tag."""
    run_git(["init", "--quiet", str(dest)], what=f"cannot create a workspace in {dest}")
    shallow = run_git(
        ["-C", str(dest), "fetch", "--quiet", "--no-tags", "--depth=1", "--", url, commit],
        what=f"cannot fetch {commit} from {url}", check=False, should_stop=should_stop,
    )
    if shallow.returncode == 0:
        return
    run_git(["-C", str(dest), "fetch", "--quiet", "--", url,
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
