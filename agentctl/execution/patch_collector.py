"""The run's patch: the workspace diff against the base commit, parsed into file changes.

git writes the diff straight to its file (`diff-index`, plumbing, so no user diff configuration
such as `diff.noprefix`, colour or external drivers changes its shape); unidiff parses it. Staging
goes to a temporary copy of the workspace index: collecting twice gives the same patch, and an
agent's half-finished `git add` (or a stale `index.lock`) is neither disturbed nor in the way.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from agentctl.domain.enums import ChangeType
from agentctl.domain.errors import InfrastructureFailure
from agentctl.domain.judge import DiffLine
from agentctl.domain.patch import FileChange, classify
from agentctl.domain.run import PatchBoundary
from agentctl.execution.workspace import one_line, require_sha, run_git

_DEV_NULL = "/dev/null"
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


@dataclass(frozen=True, slots=True)
class CollectedPatch:
    diff_path: Path                      # the unified diff written (may be empty)
    changes: tuple[FileChange, ...]
    diff_lines: tuple[DiffLine, ...]     # added/removed lines with path and new/old line number
    empty: bool


def collect_patch(
    workspace: Path, base_commit: str, diff_path: Path, boundary: PatchBoundary,
) -> CollectedPatch:
    """Diff the work tree (new, deleted, renamed and binary files included) against `base_commit`.

    Ignored files are left out, as `git add -A` leaves them out. Raises InfrastructureFailure
    when git fails or writes a diff unidiff cannot read.
    """
    require_sha(base_commit)
    diff_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agentctl-index-") as scratch:
        index = Path(scratch) / "index"
        current = workspace / ".git" / "index"
        if current.is_file():
            shutil.copyfile(current, index)  # its stat cache spares re-hashing unchanged files
        env = {"GIT_INDEX_FILE": str(index)}
        run_git(["-C", str(workspace), "add", "--all"], env=env,
                what=f"cannot stage the changes in {workspace}")
        with diff_path.open("wb") as out:
            run_git(["-C", str(workspace), "-c", "core.quotePath=false", "diff-index", "--cached",
                     "--patch", "--binary", "--full-index", "--find-renames", "--no-color",
                     base_commit, "--"],
                    env=env, stdout=out, what=f"cannot diff {workspace} against {base_commit}")
    if diff_path.stat().st_size == 0:
        return CollectedPatch(diff_path=diff_path, changes=(), diff_lines=(), empty=True)
    changes, lines = parse_diff(diff_path, boundary)
    return CollectedPatch(diff_path=diff_path, changes=changes, diff_lines=lines,
                          empty=not changes)


def parse_diff(
    diff_path: Path, boundary: PatchBoundary,
) -> tuple[tuple[FileChange, ...], tuple[DiffLine, ...]]:
    """FileChanges and added/removed lines of a git diff; text that is not UTF-8 is replaced."""
    paths: list[str | None] = []
    # newline="\n": a lone "\r" inside a line must not split it, or hunk lengths stop adding up.
    with diff_path.open(encoding="utf-8", errors="replace", newline="\n") as handle:
        try:
            patch = PatchSet(_with_plain_names(handle, paths))
        except UnidiffParseError as error:
            raise InfrastructureFailure(f"cannot parse the diff {diff_path}: {error}") from None
    if len(patch) != len(paths):
        raise InfrastructureFailure(f"cannot parse the diff {diff_path}: unexpected file headers")
    changes: list[FileChange] = []
    lines: list[DiffLine] = []
    for patched, path in zip(patch, paths, strict=False):
        change = _file_change(patched, path, boundary)
        changes.append(change)
        lines.extend(_diff_lines(patched, change.path))
    return tuple(changes), tuple(lines)


def _with_plain_names(lines: Iterable[str], paths: list[str | None]) -> Iterator[str]:
    """Feed unidiff placeholder names, keeping the real ones in `paths` (one per file).

    unidiff splits `diff --git a/X b/Y` at the last " b/", which is wrong for a path like
    `docs b/x`, and then rejects the `+++` line. git's header is exact when both sides are the
    same path (every change but renames and copies, whose exact paths are on their own lines).
    """
    in_header = False
    for line in lines:
        if line.startswith("diff --git "):
            in_header = True
            paths.append(_same_path_header(line[len("diff --git "):].rstrip("\n")))
            yield "diff --git a/file b/file\n"
        elif in_header and line.startswith(("--- a/", '--- "a/', "+++ b/", '+++ "b/')):
            yield line[:4] + ("a/file\n" if line.startswith("-") else "b/file\n")
        else:
            in_header = in_header and not line.startswith(("@@ ", "GIT binary patch"))
            yield line


def _same_path_header(names: str) -> str | None:
    half = (len(names) - 1) // 2
    old, new = names[:half], names[half + 1:]
    if len(names) % 2 == 0 or names[half] != " ":
        return None
    old, new = _unquote(old), _unquote(new)
    return new[2:] if old[2:] == new[2:] and old.startswith("a/") and new.startswith("b/") else None


def _file_change(patched: PatchedFile, path: str | None, boundary: PatchBoundary) -> FileChange:
    header = _extended_header(patched)
    old_path: str | None = None
    if "rename from" in header or "copy from" in header:
        kind = ChangeType.RENAMED if "rename from" in header else ChangeType.COPIED
        verb = "rename" if kind is ChangeType.RENAMED else "copy"
        old_path, path = header[f"{verb} from"], header[f"{verb} to"]
    elif patched.source_file == _DEV_NULL:
        kind = ChangeType.ADDED
    elif patched.target_file == _DEV_NULL:
        kind = ChangeType.DELETED
    else:
        kind = ChangeType.MODIFIED
    if path is None:
        raise InfrastructureFailure(f"cannot read the path of a diff entry: {patched.patch_info}")
    binary = patched.is_binary_file
    return classify(
        path, kind, 0 if binary else patched.added, 0 if binary else patched.removed,
        binary=binary, boundary=boundary, old_path=old_path,
    )


def _extended_header(patched: PatchedFile) -> dict[str, str]:
    """git's `rename from X` / `copy to Y` lines: the exact paths, never split on spaces."""
    out: dict[str, str] = {}
    for line in patched.patch_info or ():
        for key in ("rename from", "rename to", "copy from", "copy to"):
            if line.startswith(key + " "):
                out[key] = _unquote(line[len(key) + 1:].rstrip("\n"))
    return out


def _diff_lines(patched: PatchedFile, path: str) -> Iterator[DiffLine]:
    for hunk in patched:
        for line in hunk:
            if line.is_added or line.is_removed:
                yield DiffLine(
                    path=path,
                    line_number=line.target_line_no if line.is_added else line.source_line_no,
                    added=line.is_added,
                    text=line.value.removesuffix("\n").removesuffix("\r"),
                )


def _unquote(name: str) -> str:
    """git C-quotes a path holding `"`, `\\` or control characters (octal escapes for bytes)."""
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    raw, body, i = bytearray(), name[1:-1], 0
    while i < len(body):
        char = body[i]
        if char == "\\" and body[i + 1:i + 4].isdigit() and len(body[i + 1:i + 4]) == 3:
            raw.append(int(body[i + 1:i + 4], 8) & 0xFF)
            i += 4
        elif char == "\\" and i + 1 < len(body) and body[i + 1] in _ESCAPES:
            raw.append(_ESCAPES[body[i + 1]])
            i += 2
        else:
            raw += char.encode("utf-8")
            i += 1
    return raw.decode("utf-8", "replace")


def check_applies(
    repository_git_dir: Path, base_commit: str, diff_path: Path,
) -> tuple[bool, str | None]:
    """Whether the diff applies cleanly to the base commit, checked in a throw-away index.

    `repository_git_dir` is a `.git` directory or a work tree holding the base commit's objects;
    no work tree and no real index is touched. Returns (False, git's first error line) on conflict;
    raises InfrastructureFailure when the base commit is not in that repository.
    """
    require_sha(base_commit)
    if diff_path.stat().st_size == 0:
        return True, None
    where = (["-C", str(repository_git_dir)] if (repository_git_dir / ".git").exists()
             else ["--git-dir", str(repository_git_dir)])
    with tempfile.TemporaryDirectory(prefix="agentctl-apply-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        run_git([*where, "read-tree", base_commit], env=env, cwd=Path(scratch),
                what=f"cannot read the tree of {base_commit}")
        result = run_git(
            [*where, "apply", "--cached", "--check", "--whitespace=nowarn",
             str(diff_path.resolve())],
            env=env, cwd=Path(scratch), check=False, what="git apply --check",
        )
    if result.returncode == 0:
        return True, None
    first = next((line.strip() for line in result.stderr.splitlines() if line.strip()), "")
    return False, one_line(first) or f"git apply exited {result.returncode}"
