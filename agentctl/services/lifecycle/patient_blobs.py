"""An artifact store that cannot be written for a while (a read-only remount, a full or
unmounted shared folder) holds the attempt instead of failing it, as a database that cannot be
reached does: the write is tried again, with backoff, for up to `[store]
artifact_outage_seconds`, the lease's heartbeat going on beside it (a thread of its own), and
one warning said. Past the bound, or once the attempt is stopped (cancelled, its lease lost),
the write's error stands: the attempt is an infrastructure failure, retried as one.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agentctl.domain.blob import StoredBlob
from agentctl.services.ports import Blobs

# What a store that cannot be written, rather than a bad request, says.
UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT,
                        errno.EIO, errno.ENOTCONN, errno.ESTALE})
_FIRST_DELAY = 0.1
_MAX_DELAY = 2.0
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BlobOutage:
    """How long an attempt waits for its artifact store, what stops the wait, who is told."""

    seconds: float
    stopped: Callable[[], bool]
    warn: Callable[[str], None]
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


class PatientBlobs:
    """`Blobs` whose writes wait out a store that cannot be written (reads are not retried)."""

    def __init__(self, inner: Blobs, outage: BlobOutage) -> None:
        self._inner, self._outage = inner, outage
        self._warned = False

    def put_bytes(self, data: bytes, /) -> StoredBlob:
        return self._patiently(lambda: self._inner.put_bytes(data))

    def put_file(self, path: Path, /, *, move: bool = False) -> StoredBlob:
        return self._patiently(lambda: self._inner.put_file(path, move=move))

    def put_written(self, write: Callable[[Path], T], /) -> tuple[StoredBlob, T]:
        """Tried again whole: a staging file the full store cut short is made anew."""
        return self._patiently(lambda: self._inner.put_written(write))

    def open_chunks(self, uri: str, /) -> Iterator[bytes]:
        return self._inner.open_chunks(uri)

    def path_for(self, uri: str, /) -> Path:
        return self._inner.path_for(uri)

    def verify(self, uri: str, sha256: str, /) -> str | None:
        return self._inner.verify(uri, sha256)

    def _patiently(self, write: Callable[[], T]) -> T:
        outage = self._outage
        deadline = outage.clock() + outage.seconds
        delay = _FIRST_DELAY
        while True:
            try:
                return write()
            except OSError as error:
                if error.errno not in UNWRITABLE or outage.stopped():
                    raise
                if outage.clock() + delay > deadline:
                    raise
                if not self._warned:
                    self._warned = True
                    outage.warn(f"WARNING: the artifact store cannot be written "
                                f"({error.strerror}); waiting up to {outage.seconds:g} s")
            outage.sleep(delay)
            delay = min(delay * 2, _MAX_DELAY)
