"""Which files a step changed: the work tree snapshotted into agentctl's own git after each
call, and the snapshot compared with the one before.

The snapshots live in a private index and agentctl's bare copy (never the agent's `.git`), so
what the agent does to its repository cannot fake them. Each entry is what `run show --tree`
prints as `edited: path (+a −d)` and `--json` carries as `changedFiles`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path

from agentctl.domain.enums import ChangeType
from agentctl.domain.errors import InfrastructureFailure
from agentctl.domain.step import ChangedFile
from agentctl.execution.agents.tree_stat import TreeStat, tree_stat
from agentctl.execution.git import WorkspaceGit, copy_index

_CHANGE_TYPES = {"A": ChangeType.ADDED, "M": ChangeType.MODIFIED, "D": ChangeType.DELETED,
                 "R": ChangeType.RENAMED, "C": ChangeType.COPIED, "T": ChangeType.MODIFIED}


class ChangeTracker:
    """The work tree as of the last snapshot. A tracked call (a command, a patch, a native
    agent's tool) is bracketed: `prepare()` before it, `changes()` after it. File tools are
    attributed without snapshots (`file_tool_changes`, `credit`) and only `mark_stale()` the
    last one.

    What changed while no call ran (a background job of an earlier call still writing, a
    process no call owns) is found by the snapshot before the next call and kept apart, never
    credited to that call; `unattributed` names it, with every file no call was credited with.
    """

    def __init__(self, git: WorkspaceGit, base_index: Path, scratch: Path) -> None:
        self.git = git
        self.index = scratch / "attribution.index"
        copy_index(base_index, self.index)  # its stat cache spares re-hashing
        self.tree: str | None = None  # None: take one before the next tracked call
        self._checksum = b""  # the index's own trailing hash as of `self.tree`
        self.credited: set[str] = set()  # every path a call was credited with
        self.between: set[str] = set()  # paths changed while no tracked call ran
        # the work tree's files as listed just before `self.tree` was taken, when stable
        self._listed: TreeStat | None = None
        self._listing = True  # False once the tree was too big to list (`tree_stat`)

    def mark_stale(self) -> None:
        self.tree = None

    def credit(self, changed: Iterable[ChangedFile]) -> None:
        for change in changed:
            self.credited.update(p for p in (change.path, change.old_path) if p)

    def prepare(self) -> None:
        """Snapshot now; what changed since the last snapshot changed between calls."""
        self._between_calls()

    def changes(self) -> list[ChangedFile]:
        """Files changed since `prepare()` (empty if none), and the snapshot moves on. An error
        of git's is no reason to stop the agent: it is reported as no attribution."""
        before = self.tree
        try:
            self.tree = self._snapshot()
        except InfrastructureFailure:
            self.tree = None
            return []
        if before is None or before == self.tree:
            return []
        changed = self._diff(before, self.tree)
        self.credit(changed)
        return changed

    def unattributed(self, patched: Iterable[str]) -> list[str]:
        """Of the `patched` paths, those no call was credited with, and every path changed
        while no call ran (after the last one included: call this once the agent is done).
        With no snapshot to compare with (no tracked call ran, or a file tool's was the last
        change), none is taken: it would only be the next call's starting point, and there is
        none (two gits, the first a full `add -A` of the work tree)."""
        if self.tree is not None:
            self._between_calls()
        return sorted(self.between | (set(patched) - self.credited))

    def _between_calls(self) -> None:
        before = self.tree
        try:
            self.tree = self._snapshot()
        except InfrastructureFailure:
            self.tree = None
            return
        if before is not None and before != self.tree:
            for change in self._diff(before, self.tree):
                self.between.update(p for p in (change.path, change.old_path) if p)

    def _snapshot(self) -> str:
        """The work tree's tree; with nothing changed since the last one (`tree_stat`, listed
        before git runs: what changes after is seen next time), that one, without git."""
        listed = tree_stat(self.git.work_tree) if self._listing else None
        self._listing = listed is not None  # a tree too big to list is not listed again
        if self.tree is not None and listed is not None and self._listed is not None \
                and listed.stable and listed.entries == self._listed.entries:
            return self.tree
        self._listed = None
        tree = self._added()
        self._listed = listed if listed is not None and listed.stable else None
        return tree

    def _added(self) -> str:
        self.git.run("add", "-A", "--", ".", index=self.index, what="cannot snapshot the work tree")
        checksum = _trailer(self.index)
        if self.tree is not None and checksum == self._checksum:
            return self.tree  # the index did not change, so neither did the tree
        self._checksum = checksum
        return self.git.run("write-tree", index=self.index,
                            what="cannot snapshot the work tree").stdout.strip()

    def _diff(self, before: str, after: str) -> list[ChangedFile]:
        listing = self.git.run("diff-tree", "-r", "-M", "-z", "--numstat", before, after,
                               what="cannot compare snapshots").stdout
        statuses = self.git.run("diff-tree", "-r", "-M", "-z", "--name-status", before, after,
                                what="cannot compare snapshots").stdout
        counts, binaries = _numstat(listing)
        changed: list[ChangedFile] = []
        fields = statuses.split("\0")
        position = 0
        while position < len(fields) and fields[position]:
            status = fields[position]
            kind = _CHANGE_TYPES.get(status[:1], ChangeType.MODIFIED)
            if status[:1] in ("R", "C"):
                old, path = fields[position + 1], fields[position + 2]
                position += 3
            else:
                old, path = None, fields[position + 1]
                position += 2
            additions, deletions = counts.get(path, (0, 0))
            size = self._size(before if kind is ChangeType.DELETED else after, path) \
                if path in binaries else None
            changed.append(ChangedFile(path, kind, additions, deletions, old, size))
        return changed

    def _size(self, tree: str, path: str) -> int | None:
        found = self.git.run("cat-file", "-s", f"{tree}:{path}", what="cannot size a file")
        return int(found.stdout) if found.stdout.strip().isdigit() else None


def _trailer(index: Path) -> bytes:
    """The index file's trailing checksum (the hash of everything before it)."""
    try:
        with index.open("rb") as reader:
            reader.seek(-32, 2)
            return reader.read()
    except OSError:
        return b""


def _numstat(text: str) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """`git diff-tree --numstat -z`: `a<TAB>d<TAB>path\\0`, or for a rename `a<TAB>d<TAB>\\0old\\0new\\0`;
    binary files count `-` (0 here, and named in the second value)."""
    counts: dict[str, tuple[int, int]] = {}
    binaries: set[str] = set()
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
        if added == deleted == "-":
            binaries.add(path)
    return counts, binaries


# --- agentctl's own file tools: attributed in-process, without a snapshot -------------------
MAX_COMPARED_BYTES = 1 << 20
FILE_TOOLS = frozenset({"fs.write", "fs.replace", "fs.delete", "fs.rename"})


def touched_paths(tool: str, arguments: Mapping[str, object]) -> list[str]:
    """The workspace paths an agentctl file tool names (both sides of a rename)."""
    names = [arguments.get("path"), arguments.get("to")] if tool == "fs.rename" \
        else [arguments.get("path")]
    return [str(name) for name in names if isinstance(name, str)]


def read_state(workspace: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Each path's bytes (None: absent, or too large to compare)."""
    state: dict[str, bytes | None] = {}
    for name in paths:
        path = workspace / name
        try:
            state[name] = path.read_bytes() if path.is_file() and not path.is_symlink() \
                and path.stat().st_size <= MAX_COMPARED_BYTES else None
        except OSError:
            state[name] = None
    return state


def file_tool_changes(tool: str, arguments: Mapping[str, object],
                      before: Mapping[str, bytes | None],
                      after: Mapping[str, bytes | None]) -> list[ChangedFile]:
    """What one fs.* call changed, from the files' contents before and after it."""
    if tool == "fs.rename":
        source, target = touched_paths(tool, arguments)
        lines = _lines(before.get(source))
        return [ChangedFile(target, ChangeType.RENAMED, 0, 0, source)] if after.get(target) is not None \
            or lines is not None else []
    changed: list[ChangedFile] = []
    for name in touched_paths(tool, arguments):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        kind = ChangeType.ADDED if old is None else ChangeType.DELETED if new is None \
            else ChangeType.MODIFIED
        content = new if new is not None else old
        if content is not None and b"\0" in content[:8000]:  # git's own test for binary
            changed.append(ChangedFile(name, kind, 0, 0, binary_size=len(content)))
            continue
        additions, deletions = line_counts(_lines(old) or [], _lines(new) or [])
        changed.append(ChangedFile(name, kind, additions, deletions))
    return changed


def line_counts(old: list[str], new: list[str]) -> tuple[int, int]:
    """Lines added and removed, as a unified diff counts them."""

    additions = deletions = 0
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            additions += 1
        elif line.startswith("-") and not line.startswith("---"):
            deletions += 1
    return additions, deletions


def _lines(data: bytes | None) -> list[str] | None:
    return None if data is None else data.decode("utf-8", "replace").splitlines()
