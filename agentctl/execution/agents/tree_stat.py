"""A work tree's file metadata, to tell without starting git that nothing git could see has
changed since a snapshot: each tracked call is bracketed by two snapshots (`git add -A`, a
process each, ~10 ms per call at load on the way of a native agent's tool call), and most calls
(a test run, a read, a listing) change nothing.

Every path under the tree but its own top-level `.git` (which git never adds) is listed with
its inode, mode, size, modification and change times (lstat). A change to a file's content
moves its ctime, which no unprivileged process can set back (`utime` sets it to now), so an
equal listing means an equal `add -A`, as git's own index refresh reasons. Except within the
filesystem clock's tick of the listing ("racy" entries, as git calls them): a write just after
an entry was read may keep its times, so a listing with an entry changed within `RACY_NS` of
it, or on a filesystem without sub-second times, is never trusted (`stable` is False).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

# a kernel's file times follow a coarse clock, one tick (<= 10 ms at HZ=100) behind the fine one
RACY_NS = 50_000_000
MAX_ENTRIES = 3000  # past that a walk in Python costs about what git's does: git is asked

Entry = tuple[int, int, int, int, int]  # inode, mode, size, mtime_ns, ctime_ns


@dataclass(frozen=True, slots=True)
class TreeStat:
    entries: dict[str, Entry]
    stable: bool  # no entry changed within RACY_NS of the listing, and times have sub-seconds


def tree_stat(root: Path, *, limit: int = MAX_ENTRIES) -> TreeStat | None:
    """The listing of `root`; None when it has more than `limit` entries (its tracker stops
    listing: git runs, as before), never `stable` when a part could not be read."""
    taken = time.time_ns()
    entries: dict[str, Entry] = {}
    fine = False
    latest = 0
    pending = [(str(root), "")]
    try:
        while pending:
            directory, prefix = pending.pop()
            with os.scandir(directory) as listing:
                for item in listing:
                    name = prefix + item.name
                    if name == ".git" and not prefix:
                        continue
                    info = item.stat(follow_symlinks=False)
                    entries[name] = (info.st_ino, info.st_mode, info.st_size,
                                     info.st_mtime_ns, info.st_ctime_ns)
                    if len(entries) > limit:
                        return None
                    latest = max(latest, info.st_mtime_ns, info.st_ctime_ns)
                    fine = fine or info.st_ctime_ns % 1_000_000_000 != 0
                    if item.is_dir(follow_symlinks=False):
                        pending.append((item.path, name + "/"))
    except OSError:  # a file removed while listed, an unreadable folder: git will tell
        return TreeStat(entries, stable=False)
    return TreeStat(entries, stable=fine and latest < taken - RACY_NS)
