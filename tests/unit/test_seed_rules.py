"""The seed's rules that live in the domain records themselves (the rest are end to end)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentctl.domain.artifact import Artifact
from agentctl.domain.errors import InvariantViolation


@pytest.fixture
def artifact(samples: dict[str, object]) -> Artifact:
    record = samples["Artifact"]
    assert isinstance(record, Artifact)
    return record


def test_artifact_without_a_hash_is_rejected(artifact: Artifact) -> None:
    with pytest.raises(InvariantViolation, match="sha256"):
        replace(artifact, sha256="")


@pytest.mark.parametrize("value", [
    None,
    "   ",
    "ab" * 31,  # too short
    "ab" * 33,  # too long
    "zz" * 32,  # not hex
    "sha256:" + "ab" * 32,  # a digest label is not the content hash itself
], ids=["none", "blank", "short", "long", "not-hex", "prefixed"])
def test_artifact_with_anything_but_a_sha256_hex_digest_is_rejected(
        artifact: Artifact, value: object) -> None:
    with pytest.raises(InvariantViolation, match="sha256"):
        replace(artifact, sha256=value)  # type: ignore[arg-type]


def test_artifact_with_a_sha256_hex_digest_is_accepted(artifact: Artifact) -> None:
    assert replace(artifact, sha256="0f" * 32).sha256 == "0f" * 32


def test_artifact_with_a_hash_followed_by_a_newline_is_rejected(artifact: Artifact) -> None:
    with pytest.raises(InvariantViolation, match="sha256"):
        replace(artifact, sha256="ab" * 32 + "\n")
