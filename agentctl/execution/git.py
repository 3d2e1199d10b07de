"""How agentctl runs git, so that nothing an agent left behind runs inside it.

Two ways, for two kinds of repository:
- the user's own repository (clone source, `pr create`): `trusted_git`, the user's environment
  and configuration, as they would run git themselves, with a timeout;
- anything an agent has touched (the workspace, its patch): `WorkspaceGit`. Its GIT_DIR is
  agentctl's own bare copy of the base commit, made before the agent started, with a private
  index; the workspace is only its work tree. No system, global or workspace config is read
  (so no `core.fsmonitor`, hooks, filters, `diff.external`, aliases or includes planted in the
  workspace's `.git`), the environment is minimal (no tokens), and every call has a timeout
  and honours cancellation.
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution import lifelines, reaper

DEFAULT_TIMEOUT_SECONDS = 300.0
# a whole commit id as git writes it in a ref (SHA-1, or SHA-256)
FULL_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_POLL_SECONDS = 0.1
_MESSAGE_LIMIT = 400
_keeping = threading.local()  # `on`: this thread's git is kept from the reaper's sweeps

# `git rev-parse --local-env-vars`: variables that would point git at another repository, index or
# configuration than the one named on its command line (e.g. when agentctl runs inside a git hook).
_REPOSITORY_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
    "GIT_SHALLOW_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE",
)
# Settings a git call on agent-touched files must not take from anywhere but here. (Not
# core.splitIndex: left unset, git keeps an index split or whole as it finds it, and only
# agentctl's own config is read. The tree cache's large indexes are split: see workspace.)
HARDENED_CONFIG = (
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null", "core.pager=cat", "core.quotePath=false",
    "core.untrackedCache=false", "core.symlinks=true",
    "core.autocrlf=false", "core.safecrlf=false", "core.sparseCheckout=false",
    "diff.external=", "diff.noprefix=false", "diff.mnemonicPrefix=false", "diff.relative=false",
    "color.ui=false", "submodule.recurse=false", "protocol.allow=never", "safe.directory=*",
    "advice.detachedHead=false", "gc.auto=0", "maintenance.auto=false",
)


# What the agent's own git (run by its tool calls) may not take from a `.git/config` it wrote:
# given through GIT_CONFIG_COUNT, which wins over every config file. (`diff.external` cannot be
# switched off this way, an empty value is run as a command; the command guard denies the ways
# to write `.git/config` that the default rules would otherwise allow, `git log --output`.)
AGENT_GIT_OVERRIDES = (
    ("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"), ("core.pager", "cat"),
    ("core.sshCommand", "false"), ("core.editor", "false"),
    ("sequence.editor", "false"), ("credential.helper", ""), ("protocol.allow", "never"),
)


def agent_git_env() -> dict[str, str]:
    """Environment that pins the settings above for any git a tool call runs."""
    env = {"GIT_CONFIG_COUNT": str(len(AGENT_GIT_OVERRIDES)), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_TERMINAL_PROMPT": "0"}
    for number, (key, value) in enumerate(AGENT_GIT_OVERRIDES):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    return env


def copy_index(source: Path, target: Path) -> None:
    """A copy of a git index that git reads as it reads the original: the file's mtime is kept.

    git trusts an entry's stat data only when the file is older than the index itself ("racy
    git"); a copy with a fresh mtime would make an edit of the same size in the checkout's own
    second look unchanged, and the patch would silently miss it.
    """
    shutil.copy2(source, target)


@dataclass(frozen=True, slots=True)
class GitResult:
    returncode: int
    stdout: str
    stderr: str


@dataclass(frozen=True, slots=True)
class GitBytes:
    """A git command's output as git wrote it: paths exactly as stored, object bodies whole."""

    returncode: int
    stdout: bytes
    stderr: str


def unquote_path(name: bytes) -> bytes:
    """A path as git writes it in diff headers and listings: C-quoted when it holds `"`, `\\`,
    control characters or bytes past ASCII (`"caf\\303\\251.md"` is `café.md`)."""
    if len(name) >= 2 and name[:1] == name[-1:] == b'"':
        return codecs.escape_decode(name[1:-1])[0]
    return name


def one_line(text: str) -> str:
    """git's stderr folded onto one line, bounded, for error messages and failure reports."""
    folded = " ".join(text.split())
    return folded if len(folded) <= _MESSAGE_LIMIT else folded[: _MESSAGE_LIMIT - 1] + "…"


def trusted_git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment minus anything that would redirect git, plus `extra`: for the
    user's own repository, where their credential helpers and identity belong."""
    env = {
        name: value for name, value in os.environ.items()
        if name not in _REPOSITORY_ENV
        and not name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env["GIT_TERMINAL_PROMPT"] = "0"  # a URL needing credentials fails instead of hanging the run
    env.update(extra or {})
    return env


def hardened_argv(*args: str) -> list[str]:
    return ["git", *(part for setting in HARDENED_CONFIG for part in ("-c", setting)), *args]


def hardened_env(home: Path) -> dict[str, str]:
    """A minimal environment that reads no configuration but what the command line gives."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
        "XDG_CONFIG_HOME": str(home), "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ATTR_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
    }


@dataclass(frozen=True, slots=True)
class WorkspaceGit:
    """git over an agent-touched work tree, with agentctl's own GIT_DIR and index."""

    git_dir: Path  # agentctl's bare copy of the base: never inside the work tree
    work_tree: Path
    home: Path  # a private, empty folder: nothing of the user's (or the agent's) is read from it

    def env(self, index: Path | None = None) -> dict[str, str]:
        env = {**hardened_env(self.home), "GIT_DIR": str(self.git_dir),
               "GIT_WORK_TREE": str(self.work_tree)}
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return env

    def run(self, *args: str, what: str, index: Path | None = None,
            stdout: IO[bytes] | None = None, stdin: bytes | None = None, check: bool = True,
            should_stop: Callable[[], bool] | None = None,
            timeout: float = DEFAULT_TIMEOUT_SECONDS) -> GitResult:
        return run_git_process(hardened_argv(*args), env=self.env(index), cwd=self.work_tree,
                               what=what, stdout=stdout, stdin=stdin, check=check,
                               should_stop=should_stop, timeout=timeout)

    def run_bytes(self, *args: str, what: str, index: Path | None = None,
                  stdin: bytes | None = None, check: bool = True) -> GitBytes:
        """`run`, its output left undecoded."""
        return _run_bytes(hardened_argv(*args), env=self.env(index), cwd=self.work_tree,
                          what=what, stdin=stdin, check=check)


def trusted_git(args: Sequence[str], *, what: str, cwd: Path | None = None,
                env: Mapping[str, str] | None = None, check: bool = True,
                should_stop: Callable[[], bool] | None = None,
                timeout: float = DEFAULT_TIMEOUT_SECONDS, stdin: bytes | None = None,
                ) -> GitResult:
    """`git ARGS` on the user's own repository, as they would run it (hooks disabled)."""
    return run_git_process(["git", "-c", "core.hooksPath=/dev/null", *args],
                           env=trusted_git_environment(env), cwd=cwd, what=what, check=check,
                           should_stop=should_stop, timeout=timeout, stdin=stdin)


class GitCancelled(InfrastructureFailure):
    """A git command was stopped because the run was cancelled; its process group was killed."""


def run_git_process(argv: Sequence[str], *, env: Mapping[str, str], what: str,
                    cwd: Path | None = None, stdout: IO[bytes] | None = None,
                    stdin: bytes | None = None, check: bool = True,
                    should_stop: Callable[[], bool] | None = None,
                    timeout: float = DEFAULT_TIMEOUT_SECONDS) -> GitResult:
    """Run git (no shell) in its own session, killed when the thread starting it ends (a worker
    killed mid-clone leaves no git writing: `lifelines`); raise InfrastructureFailure naming
    `what` and git's stderr when it fails, times out or is stopped (GitCancelled), after killing
    its group.

    `stdout`, when given, receives git's output directly (a diff never passes through Python).
    """
    raw = _run_bytes(argv, env=env, what=what, cwd=cwd, stdout=stdout, stdin=stdin, check=check,
                     should_stop=should_stop, timeout=timeout)
    return GitResult(raw.returncode, raw.stdout.decode("utf-8", "replace"), raw.stderr)


@contextmanager
def kept_from_sweeps() -> Iterator[None]:
    """Every git the calling thread starts in the block is kept from the reaper's sweeps while
    it runs (`reaper.kept`): work beside the pipeline (the base's checkout on a thread of its
    own) whose git the attempt's sweep must neither kill nor wait for."""
    before = getattr(_keeping, "on", False)
    _keeping.on = True
    try:
        yield
    finally:
        _keeping.on = before


def _run_bytes(argv: Sequence[str], *, env: Mapping[str, str], what: str,
               cwd: Path | None = None, stdout: IO[bytes] | None = None,
               stdin: bytes | None = None, check: bool = True,
               should_stop: Callable[[], bool] | None = None,
               timeout: float = DEFAULT_TIMEOUT_SECONDS) -> GitBytes:
    keeping = getattr(_keeping, "on", False)
    try:
        with _input_file(stdin) as source, \
                reaper.kept() if keeping else nullcontext(None) as keep:
            process = subprocess.Popen(
                lifelines.tied(argv), stdin=source,
                stdout=stdout if stdout is not None else subprocess.PIPE,
                stderr=subprocess.PIPE, env=dict(env), cwd=cwd, start_new_session=True,
                pass_fds=lifelines.held(),
            )
            if keep is not None:
                keep(process.pid)
    except OSError as error:
        raise InfrastructureFailure(f"{what}: cannot run git: {error}") from None
    try:
        out, err = _communicate(process, should_stop, timeout, what)
    finally:
        if keeping:
            reaper.release(process.pid)
    result = GitBytes(process.returncode, out, err.decode("utf-8", "replace"))
    if check and result.returncode != 0:
        detail = one_line(result.stderr) or f"git exited {result.returncode}"
        raise InfrastructureFailure(f"{what}: {detail}")
    return result


@contextmanager
def _input_file(stdin: bytes | None) -> Iterator[IO[bytes] | int]:
    """What git reads as its standard input: `stdin` from an unlinked file, so that no pipe
    has to be fed while we poll. communicate() feeds a pipe only in the call that was given the
    input and refuses it in a later one: input left over when that call's poll timed out (more
    than a pipe holds, or a loaded machine) never reached git, which waited for the rest until
    the timeout (a `cat-file --batch` of thousands of trees hung for 300 s)."""
    if stdin is None:
        yield subprocess.DEVNULL
        return
    with tempfile.TemporaryFile() as source:
        source.write(stdin)
        source.seek(0)
        yield source


def _communicate(process: subprocess.Popen[bytes], should_stop: Callable[[], bool] | None,
                 timeout: float, what: str) -> tuple[bytes, bytes]:
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                out, err = process.communicate(
                    timeout=min(_POLL_SECONDS, max(deadline - time.monotonic(), 0)))
                return out or b"", err or b""
            except subprocess.TimeoutExpired:
                if should_stop is not None and should_stop():
                    raise GitCancelled(f"{what}: cancelled; git stopped") from None
                if time.monotonic() >= deadline:
                    raise InfrastructureFailure(f"{what}: git did not finish within "
                                                f"{timeout:g} s") from None
    except BaseException:
        _kill_group(process)  # cancelled, timed out or Ctrl-C: in its own session, git would
        raise  # outlive us


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """git forks helpers (index-pack, remote helpers): stop the whole group, then reap."""
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
