"""Deleting attempts' directories off the critical path: a folder already renamed to trash is
deleted by a detached process of the lowest CPU priority, so a run's command returns as soon as
its verdict is out, not after thousands of unlinks.

The process deletes every trash folder it finds beside the one it was started for, so one that a
crash (or a kill of the deleter) left behind goes with the next run's; the workers' sweep removes
them too. Trash holds nothing mounted (views are unmounted before the rename), and `rm` is told
not to cross into another filesystem should anything be.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from agentctl.execution.reaper import kept, release
from agentctl.execution.workspaces.removal import force_rmtree

# $1: the folder holding the trash, $2: the trash prefix. A folder rm cannot empty as it is
# (an agent's read-only folders, when not root) is made writable and tried again.
_DELETE = """cd -- "$1" || exit 0
for trash in "$2"*; do
  [ -d "$trash" ] && [ ! -L "$trash" ] || continue
  rm -rf --one-file-system -- "$trash" 2>/dev/null && continue
  chmod -R u+rwX -- "$trash" 2>/dev/null
  rm -rf --one-file-system -- "$trash" 2>/dev/null
done
"""
# A folder renamed for deletion out of the way (an attempt's directory, `discard_workspace`; an
# overlay probe's): whatever carries this prefix is garbage, removed by the process started for
# it or by the next sweep.
TRASH_PREFIX = "agentctl-trash-"
_SHELL = "/bin/sh"
_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
_started: list[int] = []  # deleters of this process whose exit was not collected yet


def spawn_deleter(parent: Path, prefix: str) -> int:
    """Start the detached deleter of the trash folders named `prefix`* in `parent`; its pid.
    It is kept from the reaper's sweeps (an attempt starting while it runs must not kill it)."""
    collect()
    argv = [_SHELL, "-c", _DELETE, "agentctl-trash", str(parent), prefix]
    null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    with kept() as keep:
        try:
            pid = os.posix_spawn(_SHELL, argv, _ENVIRONMENT, file_actions=null, setsid=True,
                                 scheduler=(os.SCHED_IDLE, os.sched_param(0)))
        except OSError:  # the idle class refused: the lowest nice value instead
            pid = os.posix_spawn("/usr/bin/nice", ["nice", "-n", "19", *argv], _ENVIRONMENT,
                                 file_actions=null, setsid=True)
        keep(pid)
    _started.append(pid)
    return pid


def collect() -> None:
    """Collect the exit status of deleters that are done (a long-lived worker would otherwise
    gather zombies: it calls this when idle, and each start of a deleter does), and hand them
    back to the reaper's sweeps."""
    for pid in list(_started):
        with contextlib.suppress(ChildProcessError):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                continue
        _started.remove(pid)
        release(pid)


def sweep_trash(parent: Path, prefix: str) -> int:
    """Delete here every trash folder in `parent` (what crashed runs left); how many went."""

    removed = 0
    try:
        with os.scandir(parent) as entries:
            found = [entry.path for entry in entries if entry.name.startswith(prefix)
                     and entry.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    for path in found:
        with contextlib.suppress(OSError):
            force_rmtree(path)
            removed += 1
    return removed
