"""Artifacts: evidence kept outside the database, addressed and verified by sha256."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    RedactionStatus,
    visibility_rank,
)
from agentctl.domain.errors import InvariantViolation

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    artifact_id: str
    run_id: str
    attempt_id: str
    produced_by_step: str
    type: ArtifactType
    name: str
    uri: str
    sha256: str
    size_bytes: int
    redaction_status: RedactionStatus
    visibility: ArtifactVisibility
    created_at: datetime
    spec_digest: str
    metadata: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_artifact(self)


def check_artifact(artifact: Artifact) -> None:
    if not _SHA256.fullmatch(artifact.sha256 or ""):
        raise InvariantViolation(f"artifact {artifact.name!r} has no valid sha256 content hash")
    if not artifact.produced_by_step:
        raise InvariantViolation(f"artifact {artifact.name!r} must name the step that produced it")
    if artifact.size_bytes < 0:
        raise InvariantViolation(f"artifact {artifact.name!r} has a negative size")
    safer_than_internal = visibility_rank(artifact.visibility) > visibility_rank(
        ArtifactVisibility.INTERNAL_ONLY
    )
    if safer_than_internal and artifact.redaction_status is RedactionStatus.RAW:
        raise InvariantViolation(
            f"artifact {artifact.name!r} was not scanned for secrets; it must stay INTERNAL_ONLY"
        )


def is_safe_for_pr(artifact: Artifact) -> bool:
    return visibility_rank(artifact.visibility) >= visibility_rank(ArtifactVisibility.SAFE_FOR_PR)
