"""A model exchange's artifact is redacted the same whether its texts were redacted before
(`Redactions`: each request repeats the whole conversation so far) or not, counts included."""

from __future__ import annotations

import json
from pathlib import Path

from agentctl.domain.enums import ArtifactType
from agentctl.domain.redaction import Redactor
from agentctl.services.attempts import evidence
from agentctl.services.attempts.evidence import Redactions, json_artifact
from agentctl.store.blobs import BlobStore

TOKEN = "ghp_" + "a1B2c3D4e5" * 4
SYSTEM = "You are a coding agent. " * 400 + f"Use {TOKEN} and key sk-live-secret-0123."


def requests() -> list[dict[str, object]]:
    """Three requests of one conversation: each repeats the system prompt and the turns."""
    turns: list[str] = []
    out: list[dict[str, object]] = []
    for n in range(3):
        turns.append(f"turn {n}: call the tool with sk-live-secret-0123 (token {TOKEN})")
        out.append({"system": SYSTEM, "contents": [{"text": t} for t in turns]})
    return out


def artifacts(tmp_path: Path, redactor: Redactor | Redactions) -> list[tuple[bytes, str]]:
    blobs = BlobStore(tmp_path)
    made = [json_artifact(blobs, request, name="model-exchange.json",
                          type_=ArtifactType.MODEL_TRANSCRIPT_SUMMARY, redactor=redactor)
            for request in requests()]
    return [(blobs.path_for(a.blob.uri).read_bytes(), a.metadata["redactions"]) for a in made]


def test_kept_redactions_give_the_same_artifacts_and_counts(tmp_path: Path) -> None:
    redactor = Redactor(literals=("sk-live-secret-0123",))
    plain = artifacts(tmp_path / "plain", redactor)
    kept = Redactions(redactor)
    remembered = artifacts(tmp_path / "kept", kept)
    assert remembered == plain
    assert [count for _, count in plain] == ["4", "6", "8"]  # each secret of each request
    assert TOKEN not in json.dumps([text.decode() for text, _ in plain])
    assert SYSTEM in kept.kept  # the repeated prompt was redacted once, then read back


def test_redactions_start_over_past_their_bound(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(evidence, "MAX_KEPT_CHARS", 100)
    kept = Redactions(Redactor())
    assert kept.clean("a" * 60) == "a" * 60 and kept.clean("b" * 60) == "b" * 60
    assert list(kept.kept) == ["b" * 60] and kept.kept_chars == 60


def test_a_compact_artifact_holds_the_same_redacted_document_on_one_line(tmp_path: Path) -> None:
    redactor = Redactor(literals=("sk-live-secret-0123",))
    blobs = BlobStore(tmp_path)
    request = requests()[-1]
    made = {compact: json_artifact(blobs, request, name="model-exchange.json",
                                   type_=ArtifactType.MODEL_TRANSCRIPT_SUMMARY,
                                   redactor=redactor, compact=compact)
            for compact in (False, True)}
    texts = {compact: blobs.path_for(a.blob.uri).read_text() for compact, a in made.items()}
    assert json.loads(texts[True]) == json.loads(texts[False])
    assert texts[True].count("\n") == 1 and texts[False].count("\n") > 1
    assert made[True].metadata == made[False].metadata == {"redactions": "8"}
    assert "sk-live-secret-0123" not in texts[True] and TOKEN not in texts[True]
