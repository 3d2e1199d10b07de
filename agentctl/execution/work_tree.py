"""Which git work tree a path is in, found without a git process: what every read command asks
(the newest run of the repository you stand in, a `--repo` filter), apart from the resolving of
a task's repository (`task_repository`), which runs git.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)


def is_url(text: str) -> bool:
    return bool(_URL.match(text))


def enclosing_work_tree(start: Path) -> str | None:
    """The git work tree `start` is in, found by looking for `.git` upwards (no git process,
    no GitPython: every read command asks), or None outside any repository."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if _is_git_marker(folder / ".git"):
            return str(folder)
    return None


def _is_git_marker(path: Path) -> bool:
    """What git itself takes for one: a git dir (it has a HEAD) or a `gitdir:` file (a linked
    worktree, a submodule); an empty `.git` folder someone left in /tmp is neither."""
    try:
        if path.is_dir():
            return (path / "HEAD").is_file()
        with path.open("rb") as marker:
            return marker.read(7) == b"gitdir:"
    except OSError:
        return False


def named_repository(text: str, aliases: Mapping[str, str], cwd: Path) -> str:
    """What a `--repo` filter names, as tasks store it: a URL as given, a path as the work tree
    it is in (the path itself when it is in none)."""
    spec = aliases.get(text, text).strip()
    if is_url(spec) and not spec.startswith("file://"):
        return spec
    path = Path(spec.removeprefix("file://")).expanduser()
    path = (cwd / path).resolve()
    return enclosing_work_tree(path) or str(path)
