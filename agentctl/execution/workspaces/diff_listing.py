"""One `git diff-tree` for the whole change: its listing (`--raw --numstat -z`: kinds, modes,
exact paths, counts) and the patch after it, written to a file by git and split here.

With `-z` git ends every listing field with NUL, then writes one more NUL before the patch.
The listing is parsed as it is read; the patch is copied out by the kernel (`sendfile`), so
memory follows the number of files changed, never what they hold.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class ListedChange:
    """One line of git's listing: the status letter and the new mode as git gives them."""

    kind: str             # A, M, T, D, R (C only where copies are looked for)
    mode: str             # the new mode; 000000 for a deleted file
    path: str             # the new path
    old_path: str | None  # a rename's or copy's source
    additions: int
    deletions: int
    binary: bool          # numstat's `-`: no line counts
    names: tuple[bytes, ...] = ()  # the path, and the source, as git wrote them (undecoded)


def split_output(output: Path, patch: Path) -> tuple[ListedChange, ...]:
    """The changes `output` (git's `-z --raw --numstat --patch` output) lists; the patch that
    follows the listing is written to `patch` (empty when nothing changed)."""
    with output.open("rb") as source:
        fields = _Fields(source)
        listed = _parse(fields)
        with patch.open("wb") as target:
            _copy_rest(source, fields.end, target)
    return listed


def _parse(fields: _Fields) -> tuple[ListedChange, ...]:
    """The raw lines (`:old new old-id new-id status`, then one path or, for R and C, two),
    then the numstat lines (`added<TAB>deleted<TAB>path`, the path empty and two names
    following for a rename), up to the empty field that ends the listing."""
    raw: list[tuple[str, str, bytes, bytes | None]] = []  # (kind, new mode, path, old path)
    counts: dict[bytes, tuple[int, int, bool]] = {}
    for field in fields:
        if not field:
            break
        if field.startswith(b":"):
            _old_mode, new_mode, _old_sha, _new_sha, status = field[1:].decode().split(" ")
            kind = status[0]
            if kind in "RC":
                source = next(fields, b"")
                raw.append((kind, new_mode, next(fields, b""), source))
            else:
                raw.append((kind, new_mode, next(fields, b""), None))
            continue
        added, deleted, name = field.split(b"\t", 2)
        if not name:  # a rename or copy: the two names follow
            next(fields, b"")
            name = next(fields, b"")
        binary = added == b"-"
        counts[name] = (0 if binary else int(added), 0 if binary else int(deleted), binary)
    listed = []
    for kind, mode, name, old in raw:
        additions, deletions, binary = counts.get(name, (0, 0, False))
        listed.append(ListedChange(kind, mode, _decoded(name),
                                   None if old is None else _decoded(old), additions, deletions,
                                   binary, (name,) if old is None else (name, old)))
    return tuple(listed)


def _decoded(name: bytes) -> str:
    """A path as git's are shown (UTF-8, bad bytes replaced)."""
    return name.decode("utf-8", "replace")


class _Fields:
    """The NUL-ended fields at the head of a file; `end` is the file offset just past the
    last field read."""

    def __init__(self, source: IO[bytes]) -> None:
        self._source = source
        self._buffer = b""
        self._start = 0     # where the next field begins in the buffer
        self._offset = 0    # the file offset of the buffer's first byte
        self.end = 0

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        while (nul := self._buffer.find(b"\0", self._start)) < 0:
            more = self._source.read(_CHUNK)
            if not more:
                raise StopIteration  # no listing, or one git did not end: nothing follows it
            self._offset += self._start
            self._buffer = self._buffer[self._start:] + more
            self._start = 0
        field = self._buffer[self._start:nul]
        self._start = nul + 1
        self.end = self._offset + self._start
        return field


def _copy_rest(source: IO[bytes], offset: int, target: IO[bytes]) -> None:
    """Everything of `source` from `offset` on, written to `target` by the kernel."""
    while sent := os.sendfile(target.fileno(), source.fileno(), offset, 1 << 30):
        offset += sent
