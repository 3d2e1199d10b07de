"""What a view's writes changed, read from its upper layer: where `git add` must look and which
files of the base it must re-read whatever their stat data says (`read`, for collecting the
patch), and every path written (`touched`, for reckoning the verified view's tree).

Every write in a view lands in its upper layer: a file is copied up before any change to its data
or metadata, a removal leaves a whiteout (a 0/0 character device), and a folder removed and made
again is marked opaque (the base's files below it are hidden without a whiteout each). What the
upper layer does not name is the cached checkout as it was built, as agentctl's index describes it.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SYMLINK_MODE = "120000"
# Past this many, the files written are looked at through their folders: git matches every
# index entry against every pathspec, and a few hundred folders cost less than thousands of paths.
MAX_EXACT_PATHS = 128
# The id an entry gets until git reads its file again (the empty blob: git refuses the null id).
_NO_OBJECT = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
# A folder whose base content the view hides or moves: overlay's marks, as root or user xattrs.
_HIDING = frozenset(f"{space}.overlay.{mark}" for space in ("trusted", "user")
                    for mark in ("opaque", "redirect"))


@dataclass(frozen=True, slots=True)
class Written:
    """`files`: the base's files (and links) written or removed, which git can look up one by
    one. `to_add`: what only `git add` stages, applying .gitignore: the folder of a new file (a
    new file at the top as itself), a folder of the base removed or made again. `reread`:
    `git update-index --index-info` lines that make git read base files again: those whose
    ctime falls within the second the cached index was written (see `read`)."""

    files: tuple[str, ...]
    to_add: tuple[str, ...]
    reread: tuple[str, ...]

    def scopes(self) -> list[str]:
        """Literal pathspecs for `git add --all` covering all of it (never the whole tree)."""
        files = (self.files if len(self.files) <= MAX_EXACT_PATHS
                 else [posixpath.dirname(path) or path for path in self.files])
        return outermost([*files, *self.to_add])


def read(lower: Path, upper: Path, indexed_second: int) -> Written:
    """The changes of the view of `lower` whose writes are in `upper`, its own `.git` aside.

    git trusts a file whose stat data matches its index entry, ctime included; an entry's ctime
    is at most `indexed_second` (the cached index's mtime, to the second). A file written later
    has a later ctime, which the agent cannot put back, so git re-reads it; only a file written
    within that second could keep its size and have its mtime put back unseen, and those are in
    `reread`, with entries git must fill again."""
    files: list[str] = []
    to_add: list[str] = []
    reread: list[str] = []
    for path, info, whole in _walk(lower, upper):
        if whole:
            to_add.append(path)
            continue
        try:
            base = os.lstat(lower / path).st_mode
        except OSError:
            base = None  # new, or under a file of the base that became a folder
        if base is None or (stat.S_ISDIR(base) and not _whiteout(info)):
            to_add.append(posixpath.dirname(path) or path)
        elif stat.S_ISDIR(base):
            to_add.append(path)  # a folder of the base removed
        else:
            files.append(path)
            if not _whiteout(info) and info.st_ctime_ns // 10**9 <= indexed_second:
                reread.append(f"{_mode(base)} {_NO_OBJECT}\t{path}\0")
    return Written(tuple(sorted(files)), tuple(outermost(to_add)), tuple(reread))


def _walk(lower: Path, upper: Path) -> Iterator[tuple[str, os.stat_result, bool]]:
    """(path, lstat, whether it is a folder `git add` must walk whole) for every entry of the
    upper layer but the root's `.git` and plain folders, which are walked into. A folder is
    walked whole when it hides or moves the base's, or is new (nothing of it needs looking up
    in the base); one that hides the base's is walked into too, for its files may be the
    base's, written again."""
    pending = [""]
    while pending:
        folder = pending.pop()
        with os.scandir(upper / folder) as entries:
            for entry in entries:
                if not folder and entry.name == ".git":
                    continue
                path = f"{folder}/{entry.name}" if folder else entry.name
                info = entry.stat(follow_symlinks=False)
                if not stat.S_ISDIR(info.st_mode):
                    yield path, info, False
                elif _HIDING.intersection(os.listxattr(entry.path, follow_symlinks=False)):
                    yield path, info, True
                    pending.append(path)
                elif not _is_folder(lower / path):
                    yield path, info, True
                else:
                    pending.append(path)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _whiteout(info: os.stat_result) -> bool:
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _mode(base: int) -> str:
    return SYMLINK_MODE if stat.S_ISLNK(base) else "100755" if base & 0o100 else "100644"


def outermost(paths: Iterable[str]) -> list[str]:
    """The paths, less those inside another of them."""
    chosen = set(paths)
    return sorted(path for path in chosen
                  if not any(folder in chosen for folder in _folders_above(path)))


def _folders_above(path: str) -> Iterator[str]:
    while (path := posixpath.dirname(path)):
        yield path


def touched(upper: Path) -> list[str]:
    """The paths a view's writes reached (relative, `/`-separated): every file, link and
    whiteout in its upper layer, the view's own `.git` aside. A file is copied up before any
    change to it, its data or its metadata, so what is not listed is the tree's as it was."""
    found: list[str] = []
    for folder, subfolders, files in os.walk(upper):
        relative = os.path.relpath(folder, upper)
        if relative == ".":
            subfolders[:] = [name for name in subfolders if name != ".git"]
            files = [name for name in files if name != ".git"]
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        found.extend(prefix + name for name in files)
        # a link to a folder is listed with the folders by os.walk
        found.extend(prefix + name for name in subfolders
                     if os.path.islink(os.path.join(folder, name)))
    return found
