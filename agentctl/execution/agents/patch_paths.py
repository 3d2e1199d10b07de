"""The paths a unified diff touches, as `patch.apply` judges them before `git apply` runs.

Apart from `guards`, which every run loads: unidiff is imported at the top here, and only the
built-in tools (a script or native agent's `patch.apply`) load this module.
"""

from __future__ import annotations

import re

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from agentctl.execution.git import unquote_path

_SYMLINK_MODE = re.compile(r"^(?:new file mode|new mode) 120000\b", re.MULTILINE)
_PLAIN_NAMES = ("rename from ", "rename to ", "copy from ", "copy to ")


def diff_paths(diff: str) -> list[str]:
    """Every workspace path a unified diff touches (both sides of a rename), as `git apply -p1`
    will see them. Raises ValueError when the diff cannot be read or would create a symlink."""
    try:
        patch = PatchSet(diff)
    except UnidiffParseError as error:
        raise ValueError(f"the diff cannot be parsed: {error}") from None
    if _SYMLINK_MODE.search(diff):
        raise ValueError("the diff creates a symlink, which patch.apply does not allow")
    prefixed: list[str] = []
    plain: list[str] = []
    for patched in patch:
        prefixed += [patched.source_file, patched.target_file]
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            prefixed += _header_names(line[len("diff --git "):])
        for start in _PLAIN_NAMES:
            if line.startswith(start):
                plain.append(_unquote(line[len(start):]))
    paths = [_strip_prefix(_unquote(name)) for name in prefixed if _unquote(name) != "/dev/null"]
    paths = list(dict.fromkeys(paths + plain))
    if not paths:
        raise ValueError("the diff names no file")
    return paths


def _header_names(rest: str) -> list[str]:
    """`a/x b/x` from a `diff --git` line; an ambiguous unquoted pair (a rename of names with
    spaces) is skipped, because git then takes the names from the lines we read anyway."""
    if '"' in rest:
        return re.findall(r'"(?:[^"\\]|\\.)*"|[^\s"]+', rest)
    half = len(rest) // 2
    first, second = rest[:half], rest[half + 1:]
    if rest[half:half + 1] == " " and first.partition("/")[2] == second.partition("/")[2]:
        return [first, second]
    return rest.split(" ") if rest.count(" ") == 1 else []


def _strip_prefix(name: str) -> str:
    if "/" not in name:
        raise ValueError(f"`{name}` lacks the a/ or b/ prefix that git apply strips")
    return name.split("/", 1)[1]


def _unquote(name: str) -> str:
    return unquote_path(name.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")
