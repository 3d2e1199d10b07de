"""Turning what a run produced into artifacts: redacted first, then hashed and stored once.

Only scanned content (REDACTED or CLEAN) may be marked safer than INTERNAL_ONLY; a log too big to
scan within the configured limit is kept RAW and INTERNAL_ONLY, and redacted when shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
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


# What a `Redactions` keeps at most (characters of the texts it has seen) before it starts over.
MAX_KEPT_CHARS = 16 * 1024 * 1024


@dataclass
class Redactions:
    """One redactor's answers, kept per text: each model request repeats the whole conversation
    (the system prompt, the tool declarations, every earlier turn), and redacting all of it
    again made recording a request grow with the run, on the way of the next tool call's hook
    (a 60 KB Gemini request: ~19 ms at load 9, ~3 ms with the repeats kept). The same text
    always redacts the same way, its count included."""

    redactor: Redactor
    kept: dict[str, tuple[str, int]] = field(default_factory=dict)
    kept_chars: int = 0

    def redact(self, text: str) -> tuple[str, int]:
        done = self.kept.get(text)
        if done is None:
            done = self.redactor.redact(text)
            if self.kept_chars + len(text) > MAX_KEPT_CHARS:
                self.kept.clear()
                self.kept_chars = 0
            self.kept[text] = done
            self.kept_chars += len(text)
        return done

    def clean(self, text: str) -> str:
        return self.redact(text)[0]


def json_artifact(blobs: Blobs, data: object, *, name: str, type_: ArtifactType,
                  redactor: Redactor | Redactions,
                  visibility: ArtifactVisibility = ArtifactVisibility.SAFE_FOR_PR,
                  compact: bool = False) -> NewArtifact:
    """Redacted value by value, so a redaction can never break the JSON around it. A
    `compact` one is written on one line: json's C encoder only writes those, and indenting
    a model request (the whole conversation so far, per request) in Python cost ~10 ms of
    each tool call's way at load 9, more as the run goes on."""
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
    text = json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":")) \
        if compact else json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
    text += "\n"
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
