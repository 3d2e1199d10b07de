"""Files reached beneath the workspace without following a symlink anywhere.

The path guard judges a name; between that judgement and the use of the name, another process of
the agent can swap a directory on the way for a symlink out of the workspace. So the file tools
never use the name again as a whole: they open the workspace once, then each component from the
descriptor of the one before with O_NOFOLLOW, and do the last step (open, create, rename, unlink)
relative to the descriptor of its parent directory. A component swapped for a symlink fails the
call; a directory swapped after it was opened is used as the directory it was, inside the
workspace. Linux and macOS both honour O_NOFOLLOW and the *at calls this needs.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from agentctl.execution.agents.tool_context import ToolFailure

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO won't hang
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_NOT_FOLLOWED = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)  # EMLINK: FreeBSD's O_NOFOLLOW answer


@contextmanager
def parent_of(root: str, relative: str, tool: str, *, create: bool = False) -> Iterator[int]:
    """The descriptor of the directory holding `relative` (a normalised posix path inside the
    workspace `root`), reached without following a symlink; `create` makes missing directories."""
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ToolFailure(f"{tool}: `{relative}` is not a plain workspace path")
    descriptor = os.open(root, _DIRECTORY & ~os.O_NOFOLLOW)  # the workspace itself, as configured
    try:
        for depth, part in enumerate(parts[:-1]):
            child = _step(descriptor, part, "/".join(parts[:depth + 1]), tool, create)
            os.close(descriptor)
            descriptor = child
        yield descriptor
    finally:
        os.close(descriptor)


def _step(parent: int, name: str, shown: str, tool: str, create: bool) -> int:
    """The directory `name` under `parent`, never reached through a symlink."""
    try:
        try:
            return os.open(name, _DIRECTORY, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise ToolFailure(f"{tool}: `{shown}` does not exist") from None
            try:
                os.mkdir(name, dir_fd=parent)
            except FileExistsError:
                pass  # made meanwhile: opened below with the same care
            return os.open(name, _DIRECTORY, dir_fd=parent)
    except OSError as error:
        if error.errno in _NOT_FOLLOWED:
            raise ToolFailure(f"{tool}: `{shown}` is a symlink or not a directory; file tools "
                              "do not follow symlinks") from None
        raise


def lstat(parent: int, name: str) -> os.stat_result | None:
    """The status of `name` itself (a symlink is a symlink), or None when absent."""
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_regular(parent: int, name: str, shown: str, tool: str) -> int:
    """A read descriptor of the regular file `name`; a symlink, directory or FIFO fails the call."""
    try:
        descriptor = os.open(name, _READ, dir_fd=parent)
    except FileNotFoundError:
        raise ToolFailure(f"{tool}: `{shown}` does not exist") from None
    except OSError as error:
        if error.errno in _NOT_FOLLOWED:
            raise ToolFailure(f"{tool}: `{shown}` is a symlink; file tools do not follow "
                              "symlinks") from None
        raise
    mode = os.fstat(descriptor).st_mode
    if stat.S_ISREG(mode):
        os.set_blocking(descriptor, True)
        return descriptor
    os.close(descriptor)
    if stat.S_ISDIR(mode):
        raise ToolFailure(f"{tool}: `{shown}` is a directory; {tool} works on files only")
    raise ToolFailure(f"{tool}: `{shown}` is not a regular file")


def read_all(descriptor: int, limit: int) -> bytes:
    """Up to `limit` bytes from the descriptor's start."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(descriptor, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def replace_contents(parent: int, name: str, data: bytes, *, mode: int | None) -> None:
    """Write `data` under a fresh name in `parent`, then rename it over `name`: whatever the name
    is by then (a hard link out, a symlink) is replaced, never written through. `mode` is kept
    when given; a new file gets the umask's default."""
    staging = f".agentctl-{secrets.token_hex(8)}"
    descriptor = os.open(staging, _CREATE, 0o666, dir_fd=parent)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            if mode is not None:
                os.fchmod(stream.fileno(), mode)
        os.replace(staging, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        try:
            os.unlink(staging, dir_fd=parent)
        except FileNotFoundError:
            pass
        raise
