"""The parsed per-test report of each check (its `.tests.json` TEST_REPORT artifact), for the
reports and attestations that list tests by name, not only by count."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from agentctl.domain.artifact import Artifact
from agentctl.domain.errors import IntegrityError
from agentctl.domain.serialize import from_json
from agentctl.domain.verification import TestReport, VerificationReport


class ArtifactReads(Protocol):
    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]: ...


class ReportFiles(Protocol):
    """The artifact files the per-test reports are read from, each checked by its hash."""

    def verify(self, uri: str, sha256: str, /) -> str | None: ...
    def path_for(self, uri: str, /) -> Path: ...


def per_test_reports(views: ArtifactReads, blobs: ReportFiles,
                     verification: VerificationReport | None) -> dict[str, TestReport]:
    """By check name: the parsed per-test reports, each checked against its hash first (a
    check without one is left out; IntegrityError names one whose file does not match)."""
    if verification is None:
        return {}
    wanted = {c.name: c.test_report_artifact for c in verification.checks
              if c.test_report_artifact}
    artifacts = views.artifacts_by_id(sorted(a for a in wanted.values() if a))
    out: dict[str, TestReport] = {}
    for name, artifact_id in wanted.items():
        artifact = artifacts.get(artifact_id or "")
        if artifact is None or not artifact.name.endswith(".tests.json"):
            continue
        if (wrong := blobs.verify(artifact.uri, artifact.sha256)) is not None:
            # never left out in silence: a report without the tests a tampered file held
            # would read as a check that listed none
            raise IntegrityError(
                f"the test report of check {name!r} ({artifact.name}, artifact "
                f"{artifact.artifact_id}) fails its hash: {wrong}; `agentctl artifact verify "
                f"{verification.run_id}` lists what else does")
        try:
            data = json.loads(Path(blobs.path_for(artifact.uri)).read_text(encoding="utf-8"))
            report = from_json(TestReport, data)
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a raw JUnit file the command wrote, not the parsed report
        out[name] = report
    return out
