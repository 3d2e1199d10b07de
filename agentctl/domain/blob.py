"""Content stored by its hash: what the blob store hands back for the bytes it was given."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StoredBlob:
    sha256: str
    size_bytes: int
    uri: str  # artifacts/sha256/ab/<hash>: under the artifact folder, wherever it is
