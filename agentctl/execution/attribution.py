"""Which files a step changed: the work tree snapshotted into agentctl's own git after each
call, and the snapshot compared with the one before.

The snapshots live in a private index and agentctl's bare copy (never the agent's `.git`), so
what the agent does to its repository cannot fake them. Each entry is what `run show --tree`
prints as `edited: path (+a −d)` and `--json` carries as `changedFiles`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.git import WorkspaceGit

_CHANGE_TYPES = {"A": "ADDED", "M": "MODIFIED", "D": "DELETED", "R": "RENAMED", "C": "COPIED",
                 "T": "MODIFIED"}


@dataclass(frozen=True, slots=True)
class ChangedFile:
    path: str
    change_type: str  # ChangeType's spelling
    additions: int
    deletions: int
    old_path: str | None = None

    def to_json(self) -> dict[str, object]:
        document: dict[str, object] = {"path": self.path, "changeType": self.change_type,
                                       "additions": self.additions, "deletions": self.deletions}
        if self.old_path:
            document["oldPath"] = self.old_path
        return document


class ChangeTracker:
    """The work tree as of the last call; `changes()` says what changed since and moves on."""

    def __init__(self, git: WorkspaceGit, base_index: Path, scratch: Path) -> None:
        self.git = git
        self.index = scratch / "attribution.index"
        shutil.copyfile(base_index, self.index)  # its stat cache spares re-hashing
        self.tree = self._snapshot()

    def changes(self) -> list[ChangedFile]:
        """Files changed since the previous snapshot (or the start); empty if none. An error
        of git's is no reason to stop the agent: it is reported as no attribution."""
        try:
            tree = self._snapshot()
        except InfrastructureFailure:
            return []
        if tree == self.tree:
            return []
        before, self.tree = self.tree, tree
        return self._diff(before, tree)

    def _snapshot(self) -> str:
        self.git.run("add", "-A", "--", ".", index=self.index, what="cannot snapshot the work tree")
        return self.git.run("write-tree", index=self.index,
                            what="cannot snapshot the work tree").stdout.strip()

    def _diff(self, before: str, after: str) -> list[ChangedFile]:
        listing = self.git.run("diff-tree", "-r", "-M", "-z", "--numstat", before, after,
                               what="cannot compare snapshots").stdout
        statuses = self.git.run("diff-tree", "-r", "-M", "-z", "--name-status", before, after,
                                what="cannot compare snapshots").stdout
        counts = _numstat(listing)
        changed: list[ChangedFile] = []
        fields = statuses.split("\0")
        position = 0
        while position < len(fields) and fields[position]:
            status = fields[position]
            kind = _CHANGE_TYPES.get(status[:1], "MODIFIED")
            if status[:1] in ("R", "C"):
                old, path = fields[position + 1], fields[position + 2]
                position += 3
            else:
                old, path = None, fields[position + 1]
                position += 2
            additions, deletions = counts.get(path, (0, 0))
            changed.append(ChangedFile(path, kind, additions, deletions, old))
        return changed


def _numstat(text: str) -> dict[str, tuple[int, int]]:
    """`git diff-tree --numstat -z`: `a<TAB>d<TAB>path\\0`, or for a rename `a<TAB>d<TAB>\\0old\\0new\\0`;
    binary files count `-` (0 here)."""
    counts: dict[str, tuple[int, int]] = {}
    fields = text.split("\0")
    position = 0
    while position < len(fields):
        record = fields[position]
        position += 1
        if not record:
            continue
        parts = record.split("\t", 2)
        if len(parts) != 3:
            continue
        added, deleted, path = parts
        if not path:  # a rename: the names follow
            path = fields[position + 1] if position + 1 < len(fields) else ""
            position += 2
        counts[path] = (int(added) if added.isdigit() else 0,
                        int(deleted) if deleted.isdigit() else 0)
    return counts
