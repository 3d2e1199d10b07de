"""The run's patch: the work tree against the base commit, as agentctl's own git sees it.

Nothing of the agent's `.git` is used: the work tree is staged into a copy of agentctl's private
index over its own bare copy of the base (see `git.WorkspaceGit`), so a planted fsmonitor,
filter, hook or stale index cannot change what is collected. The staged tree's id is kept: it is
what is verified and what `pr create` must commit. When the work tree is a view of the tree
cache, only what its upper layer names is staged (see `upper_layer`).

Memory stays bounded whatever the agent wrote: one `git diff-tree` of the base and the staged
tree writes git's own listing (exact paths, modes, counts) and the patch to a file, and only the
listing is read into memory (`diff_listing`); the added and removed lines the judge reads are
streamed out of the diff, up to a bound.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.enums import ChangeType
from agentctl.domain.errors import InfrastructureFailure
from agentctl.domain.judge import DiffLine
from agentctl.domain.patch import FileChange, classify, ignored_generated
from agentctl.domain.spec import PatchBoundary
from agentctl.execution.git import WorkspaceGit, copy_index, one_line, unquote_path
from agentctl.execution.workspaces import upper_layer
from agentctl.execution.workspaces.diff_listing import ListedChange, split_output
from agentctl.execution.workspaces.upper_layer import SYMLINK_MODE
from agentctl.execution.workspaces.workspace import AttemptDirs, require_sha, view_layers

MAX_DIFF_LINES = 20_000  # lines the judge reads; the stats count every line regardless
MAX_LINE_CHARS = 2_000
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_KINDS = {"A": ChangeType.ADDED, "M": ChangeType.MODIFIED, "T": ChangeType.MODIFIED,
          "D": ChangeType.DELETED, "R": ChangeType.RENAMED, "C": ChangeType.COPIED}
_NAMED_IGNORED = "The following paths are ignored by one of your .gitignore files:"


@dataclass(frozen=True, slots=True)
class CollectedPatch:
    diff_path: Path                      # the unified diff written (may be empty)
    changes: tuple[FileChange, ...]
    diff_lines: tuple[DiffLine, ...]     # added/removed lines, up to MAX_DIFF_LINES
    tree: str                            # the id of the work tree as staged: base + patch
    empty: bool
    excluded: tuple[str, ...] = ()       # new files tools left ([boundary] ignore_generated)
    named: frozenset[bytes] = frozenset()  # every path the diff names, as git wrote them


def collect_patch(dirs: AttemptDirs, base_commit: str, diff_path: Path,
                  boundary: PatchBoundary, *,
                  should_stop: Callable[[], bool] | None = None) -> CollectedPatch:
    """Diff the work tree (new, deleted, renamed, binary files and links included) against
    `base_commit`. Ignored files are left out, as `git add -A` leaves them out, and so are new
    files that tools left behind (`boundary.ignore_generated`: bytecode, caches, build output),
    which are returned as `excluded`. Raises InfrastructureFailure when git fails."""
    require_sha(base_commit)
    git = dirs.git
    diff_path.parent.mkdir(parents=True, exist_ok=True)
    index = dirs.scratch / "collect.index"
    copy_index(dirs.index, index)  # collecting twice gives the same patch
    layers = view_layers(dirs)
    if layers is None:  # a checkout of its own: every file may have changed
        git.run("add", "--all", "--", ".", index=index, should_stop=should_stop,
                what=f"cannot stage the changes in {dirs.tree}")
    else:
        _stage_written(git, index, dirs, *layers, should_stop)
    tree, listed = _write_and_diff(git, index, base_commit, diff_path, dirs, should_stop)
    excluded = _droppings(listed, boundary)
    if excluded:  # staged, then taken out: only git knows which new files .gitignore keeps out
        git.run("update-index", "--force-remove", "-z", "--stdin", index=index,
                stdin="".join(f"{p}\0" for p in excluded).encode(), should_stop=should_stop,
                what="cannot leave the generated files out of the patch")
        tree, listed = _write_and_diff(git, index, base_commit, diff_path, dirs, should_stop)
    changes = tuple(_change(git, tree, item, boundary) for item in listed)
    lines = tuple(stream_diff_lines(diff_path)) if changes else ()
    return CollectedPatch(diff_path, changes, lines, tree, empty=not changes, excluded=excluded,
                          named=frozenset(name for item in listed for name in item.names))


def _write_and_diff(git: WorkspaceGit, index: Path, base: str, diff_path: Path,
                    dirs: AttemptDirs, should_stop: Callable[[], bool] | None,
                    ) -> tuple[str, tuple[ListedChange, ...]]:
    """The staged tree's id, and its changes against `base` from one `git diff-tree` of the
    two trees (which reads only the folders that differ; the index is not read again), its
    patch written to `diff_path`."""
    tree = git.run("write-tree", index=index, what="cannot write the staged tree").stdout.strip()
    output = dirs.scratch / "collect.out"
    try:
        with output.open("wb") as out:
            git.run("diff-tree", "-r", "-z", "--raw", "--numstat", "--patch", "--binary",
                    "--full-index", "--find-renames", "--no-color", "--no-ext-diff",
                    "--no-textconv", base, tree, "--", stdout=out, should_stop=should_stop,
                    what=f"cannot diff {dirs.tree} against {base}")
        return tree, split_output(output, diff_path)
    finally:
        output.unlink(missing_ok=True)


def _droppings(listed: tuple[ListedChange, ...], boundary: PatchBoundary) -> tuple[str, ...]:
    """The new files `ignore_generated` names, in git's order of paths. Only new ones: a change
    to a file the base tracks is the agent's, whatever its name. (A rename's target is new.)"""
    if not boundary.ignore_generated:
        return ()
    added = sorted((item.path for item in listed if item.kind in "AR"), key=str.encode)
    return ignored_generated(added, boundary)


def _stage_written(git: WorkspaceGit, index: Path, dirs: AttemptDirs, lower: Path, upper: Path,
                   should_stop: Callable[[], bool] | None) -> None:
    """Stage what the view's upper layer names, and nothing else: the rest of the work tree is
    the cached checkout the index describes. Files of the base alone are looked up one by one
    (`update-index`); new files and folders need `git add`, which applies .gitignore (it is
    then given the files too, one call). A new file at the top is named itself, not its
    folder, which would be the whole tree: git reports it if it is ignored (see below). git's
    checks of ctime, which `upper_layer.read` relies on, are set as git's defaults have them."""
    written = upper_layer.read(lower, upper, os.stat(dirs.index).st_mtime_ns // 10**9)
    trust = ("-c", "core.trustctime=true", "-c", "core.checkStat=default")
    if written.reread:
        git.run("update-index", "-z", "--index-info", index=index,
                stdin=os.fsencode("".join(written.reread)), should_stop=should_stop,
                what="cannot mark the changed files for re-reading")
    if not written.to_add:
        if written.files:
            git.run(*trust, "update-index", "--add", "--remove", "-z", "--stdin", index=index,
                    stdin=os.fsencode("".join(f"{p}\0" for p in written.files)),
                    should_stop=should_stop, what=f"cannot stage the changes in {dirs.tree}")
        return
    # Preloading (stat-ing every entry the pathspecs match, in threads) is left out: git stats
    # only the entries named.
    result = git.run(*trust, "-c", "core.preloadIndex=false", "-c", "advice.addIgnoredFile=false",
                     "--literal-pathspecs", "add", "--all", "--pathspec-from-file=-",
                     "--pathspec-file-nul", index=index, check=False,
                     stdin=os.fsencode("".join(f"{s}\0" for s in written.scopes())),
                     should_stop=should_stop, what=f"cannot stage the changes in {dirs.tree}")
    # A pathspec in an ignored folder (a tracked file there, or a new file's folder) makes git
    # say so and exit 1, having staged everything else: ignored files are not part of a patch.
    if result.returncode != 0 and not (result.returncode == 1
                                       and result.stderr.startswith(_NAMED_IGNORED)):
        detail = one_line(result.stderr) or f"git exited {result.returncode}"
        raise InfrastructureFailure(f"cannot stage the changes in {dirs.tree}: {detail}")


def _change(git: WorkspaceGit, tree: str, item: ListedChange,
            boundary: PatchBoundary) -> FileChange:
    link = _link_target(git, tree, item.path) if item.mode == SYMLINK_MODE else None
    return classify(item.path, _KINDS[item.kind], item.additions, item.deletions,
                    binary=item.binary, boundary=boundary, old_path=item.old_path,
                    link_target=link)


def _link_target(git: WorkspaceGit, tree: str, path: str) -> str:
    """Where a symbolic link in the patch points, as a workspace-relative path when it stays
    inside (the boundary check judges it), or as written when it leaves."""
    target = git.run("cat-file", "blob", f"{tree}:{path}", what=f"cannot read link {path}").stdout
    if target.startswith("/"):
        return target
    return posixpath.normpath(posixpath.join(posixpath.dirname(path), target))


def stream_diff_lines(diff_path: Path, limit: int = MAX_DIFF_LINES) -> Iterator[DiffLine]:
    """Added and removed lines with their path and new/old line number, read line by line."""
    path: str | None = None
    old = new = 0
    yielded = 0
    # newline="\n": a lone "\r" inside a line must not split it, or hunk lengths stop adding up.
    with diff_path.open(encoding="utf-8", errors="replace", newline="\n") as handle:
        in_hunk = False
        for line in handle:
            if line.startswith("diff --git "):
                in_hunk, path = False, None
            elif not in_hunk and line.startswith("+++ "):
                path = _header_path(line[4:].rstrip("\n"))
            elif match := _HUNK.match(line):
                in_hunk, old, new = True, int(match.group(1)), int(match.group(2))
            elif in_hunk and path is not None and line[:1] in "+- ":
                text = line[1:].removesuffix("\n").removesuffix("\r")[:MAX_LINE_CHARS]
                if line[0] == "+":
                    yield DiffLine(path=path, line_number=new, added=True, text=text)
                    new, yielded = new + 1, yielded + 1
                elif line[0] == "-":
                    yield DiffLine(path=path, line_number=old, added=False, text=text)
                    old, yielded = old + 1, yielded + 1
                else:
                    old, new = old + 1, new + 1
                if yielded >= limit:
                    return
            elif line.startswith("\\"):
                continue  # "\ No newline at end of file"
            else:
                in_hunk = False


def _header_path(name: str) -> str | None:
    """`b/src/app.py` (or its C-quoted form) from a `+++` line; None for /dev/null."""
    if name == "/dev/null":
        return None
    name = unquote_path(name.encode("utf-8")).decode("utf-8", "replace")
    return name[2:] if name.startswith("b/") else name
