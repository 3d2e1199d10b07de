"""Baselines kept across runs: one file per (repository, base commit, command, verification
environment), so every run on one base pays for its baseline once.

A file per key, written to a temporary name and renamed, so concurrent workers never see half a
file; one that cannot be read is a miss, never an error. Clearing removes the files alone (a
writer's temporary file and its folder stay, so a `put` under way still lands): a baseline
cleared is simply run again by the next run on its base.
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

FOLDER = "baselines"  # the cache's folder in the state home

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


@dataclass(frozen=True, slots=True)
class Usage:
    """Baseline files and the bytes they take on disk."""

    entries: int
    size: int


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

    def usage(self) -> Usage:
        """The files in place and their bytes on disk (none when the folder does not exist)."""
        sizes = [size for _path, size in self._files()]
        return Usage(len(sizes), sum(sizes))

    def clear(self) -> Usage:
        """Remove every baseline file; returns what was removed (a file another process removed
        first is not counted)."""
        removed = []
        for path, size in self._files():
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(size)
        return Usage(len(removed), sum(removed))

    def _files(self) -> list[tuple[Path, int]]:
        """(path, bytes on disk) of each entry's file; a file gone meanwhile is left out."""
        found = []
        for path in self.root.glob("*/*.json"):  # `.tmp-*`, files being written, are not
            try:
                found.append((path, path.stat().st_blocks * 512))
            except FileNotFoundError:
                continue
        return found
