"""The content-addressed artifact store: `artifacts/sha256/ab/<hash>`, written once, read-only.

Content is written to a temporary file in the same folder and renamed into place, so a reader
never sees half an artifact and a crash leaves at most a stray temporary file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from agentctl.domain.blob import StoredBlob

CHUNK = 1024 * 1024
__all__ = ["CHUNK", "BlobStore", "StoredBlob", "hash_file"]
T = TypeVar("T")


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root  # the home's artifacts/ folder, or `[store] artifacts` (shared)

    def path_for(self, uri: str) -> Path:
        return self.root / uri.removeprefix(_PREFIX)

    def put_bytes(self, data: bytes) -> StoredBlob:
        digest = hashlib.sha256(data).hexdigest()
        target = self._target(digest)
        if not target.exists():
            self._write_atomically(target, lambda handle: handle.write(data))
        return StoredBlob(digest, len(data), self._uri(digest))

    def put_file(self, source: Path, *, move: bool = False) -> StoredBlob:
        """Store a file's content by streaming it through the hash; `move` consumes the source."""
        digest, size = hash_file(source)
        target = self._target(digest)
        if target.exists():
            if move:
                source.unlink()
        elif move and _same_filesystem(source, target.parent):
            os.chmod(source, 0o444)
            os.replace(source, target)
        else:
            def copy(handle) -> None:  # type: ignore[no-untyped-def]
                with source.open("rb") as reader:
                    while chunk := reader.read(CHUNK):
                        handle.write(chunk)
            self._write_atomically(target, copy)
            if move:
                source.unlink()
        return StoredBlob(digest, size, self._uri(digest))

    def put_written(self, write: Callable[[Path], T]) -> tuple[StoredBlob, T]:
        """A blob `write` makes in a staging file, moved in once written (the file is gone
        either way); with what `write` returned."""
        staging = self.staging_file()
        try:
            made = write(staging)
            return self.put_file(staging, move=True), made
        finally:
            staging.unlink(missing_ok=True)

    def staging_file(self) -> Path:
        """A fresh temporary file beside the store, so that moving it in is a rename."""
        self.root.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".staging-", dir=self.root)
        os.close(handle)
        return Path(name)

    def open_chunks(self, uri: str) -> Iterator[bytes]:
        with self.path_for(uri).open("rb") as reader:
            while chunk := reader.read(CHUNK):
                yield chunk

    def verify(self, uri: str, sha256: str) -> str | None:
        """None when the file is there and hashes to `sha256`, else what is wrong."""
        path = self.path_for(uri)
        if not path.is_file():
            return "file is missing"
        actual, _ = hash_file(path)
        return None if actual == sha256 else f"content hashes to {actual[:12]}, not {sha256[:12]}"

    def _target(self, digest: str) -> Path:
        return self.root / "sha256" / digest[:2] / digest

    def _uri(self, digest: str) -> str:
        return f"{_PREFIX}sha256/{digest[:2]}/{digest}"

    def _write_atomically(self, target: Path, write) -> None:  # type: ignore[no-untyped-def]
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as stream:
                write(stream)
            os.chmod(name, 0o444)
            os.replace(name, target)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise


_PREFIX = "artifacts/"


def hash_file(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as reader:
        while chunk := reader.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _same_filesystem(source: Path, folder: Path) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    return source.stat().st_dev == folder.stat().st_dev
