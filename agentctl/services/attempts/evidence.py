"""Turning what a run produced into artifacts: redacted first, then hashed and stored once.

Only scanned content (REDACTED or CLEAN) may be marked safer than INTERNAL_ONLY; a log too big to
scan within the configured limit is kept RAW and INTERNAL_ONLY, and redacted when shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from agentctl.domain.enums import ArtifactType, ArtifactVisibility, RedactionStatus
from agentctl.domain.redaction import Redactor
from agentctl.domain.serialize import to_json
from agentctl.execution.redact_stream import redact_file
from agentctl.services.ports import Blobs, NewArtifact


def log_artifact(blobs: Blobs, path: Path, *, name: str, type_: ArtifactType,
                 redactor: Redactor, redact_up_to: int,
                 visibility: ArtifactVisibility = ArtifactVisibility.VISIBLE_TO_REQUESTER,
                 metadata: Mapping[str, str] | None = None) -> NewArtifact:
    """Store a log file (consumed): redacted when small enough to scan, else raw and internal."""
    size = path.stat().st_size
    if size > redact_up_to:
        blob = blobs.put_file(path, move=True)
        return NewArtifact(type_, name, blob, ArtifactVisibility.INTERNAL_ONLY,
                           RedactionStatus.RAW, {**(metadata or {}), "note":
                           f"{size} bytes: over the redaction limit, kept raw and internal"})
    # staged, redacted and moved in as one write: a store that fills up meanwhile is waited out
    blob, found = blobs.put_written(lambda staging: redact_file(path, staging, redactor))
    path.unlink()
    status = RedactionStatus.REDACTED if found else RedactionStatus.CLEAN
    return NewArtifact(type_, name, blob, visibility, status,
                       {**(metadata or {}), "redactions": str(found)})


def json_artifact(blobs: Blobs, data: object, *, name: str, type_: ArtifactType,
                  redactor: Redactor,
                  visibility: ArtifactVisibility = ArtifactVisibility.SAFE_FOR_PR) -> NewArtifact:
    """Redacted value by value, so a redaction can never break the JSON around it."""
    found = 0

    def clean(value: object) -> object:
        nonlocal found
        if isinstance(value, str):
            text, count = redactor.redact(value)
            found += count
            return text
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list):
            return [clean(item) for item in value]
        return value

    document = clean(to_json(data))
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    blob = blobs.put_bytes(text.encode("utf-8"))
    status = RedactionStatus.REDACTED if found else RedactionStatus.CLEAN
    return NewArtifact(type_, name, blob, visibility, status, {"redactions": str(found)})


def text_artifact(blobs: Blobs, text: str, *, name: str, type_: ArtifactType,
                  redactor: Redactor,
                  visibility: ArtifactVisibility = ArtifactVisibility.SAFE_FOR_PR) -> NewArtifact:
    clean, found = redactor.redact(text)
    blob = blobs.put_bytes(clean.encode("utf-8"))
    status = RedactionStatus.REDACTED if found else RedactionStatus.CLEAN
    return NewArtifact(type_, name, blob, visibility, status, {"redactions": str(found)})


def file_artifact(blobs: Blobs, path: Path, *, name: str, type_: ArtifactType,
                  visibility: ArtifactVisibility, redaction: RedactionStatus) -> NewArtifact:
    """A file stored as is (e.g. the real patch, whose scan status the caller determined)."""
    return NewArtifact(type_, name, blobs.put_file(path), visibility, redaction)
