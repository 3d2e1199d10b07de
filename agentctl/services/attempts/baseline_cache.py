"""Baselines kept across runs: one file per (repository, base commit, command, verification
environment), so every run on one base pays for its baseline once.

A file per key, written to a temporary name and renamed, so concurrent workers never see half a
file; one that cannot be read is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agentctl.domain.baseline import Observed
from agentctl.domain.canonical import canonical_json
from agentctl.domain.serialize import from_json, to_json
from agentctl.domain.spec import ExecutionSpec, PlannedCheck

# Bumped when what a baseline holds, or how reports are read, changes.
FORMAT = 2  # 2: unittest passes are named (a base report of 1 counted them unnamed)


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineEntry:
    key: str
    repository: str
    base_commit: str
    command: str
    observed: Observed
    run_id: str  # the run that paid for it
    created_at: datetime


def baseline_key(spec: ExecutionSpec, check: PlannedCheck, env: Mapping[str, str]) -> str:
    """The digest of what decides a baseline's outcome: where, which command, how it runs
    (the sandbox profile too: limits, network allowlist and writable dirs can fail a check)."""
    environment = {
        "env": sorted(env.items()), "infraPatterns": list(spec.verification_plan.infra_patterns),
        "reruns": spec.verification_plan.reruns, "timeoutSeconds": check.timeout_seconds,
        "junitXml": check.junit_xml, "sandbox": to_json(spec.sandbox),
    }
    canonical = canonical_json({
        "format": FORMAT, "repository": spec.repository, "baseCommit": spec.base_commit,
        "command": check.command, "environment": environment,
    })
    return hashlib.sha256(canonical.encode()).hexdigest()


class BaselineCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> BaselineEntry | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            entry = from_json(BaselineEntry, data)
        except (OSError, ValueError, KeyError, TypeError):  # absent, or not an entry: a miss
            return None
        return entry if entry.key == key else None

    def put(self, entry: BaselineEntry) -> None:
        path = self._path(entry.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(to_json(entry), out, sort_keys=True)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
