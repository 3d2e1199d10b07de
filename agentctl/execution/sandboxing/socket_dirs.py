"""Private folders under /tmp for the sandbox's unix sockets (a socket's path has room for 107
bytes, so they cannot live in a deep state home).

Each folder is held by the process that made it for as long as that process lives (an flock on
a file in it): a process killed with SIGKILL cannot remove its folder, so whoever makes the next
one removes every folder of ours whose holder is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "agentctl-net-"
PARENT = Path("/tmp")
_HOLDER = "holder.lock"


class SocketDir:
    """A fresh private folder for sockets, held until `remove`."""

    def __init__(self, parent: Path = PARENT) -> None:
        sweep(parent)
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
        # The lock file appears under its name only once held: a sweep in another process that
        # found it created but not yet locked would take it and remove a live folder.
        staged = self.path / f"{_HOLDER}.new"
        self._held: int | None = os.open(
            staged, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._held, fcntl.LOCK_EX)
        os.rename(staged, self.path / _HOLDER)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._held is not None:
            os.close(self._held)
            self._held = None


def sweep(parent: Path = PARENT) -> list[Path]:
    """Remove the socket folders of ours (same owner, a real folder) whose holder is dead: its
    lock can be taken. A folder without the lock file is being made, or is not ours to judge."""
    removed = []
    for folder in parent.glob(PREFIX + "*"):
        try:
            found = os.lstat(folder)
            if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
                continue
            held = os.open(folder / _HOLDER, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its process lives
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            with contextlib.suppress(OSError):
                os.close(held)
    return removed
