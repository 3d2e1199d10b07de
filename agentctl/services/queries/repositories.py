"""Which repository a command means: the work tree you stand in, or the one a `--repo` names
(a config alias, a path, a URL). Commands ask here, not the execution adapters: the lookup is
the same every read command makes, and stays cheap (no git process)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentctl.execution.work_tree import enclosing_work_tree, named_repository


def repository_here(cwd: Path) -> str | None:
    """The git work tree `cwd` is in; None outside any repository."""
    return enclosing_work_tree(cwd)


def repository_named(text: str, aliases: Mapping[str, str], cwd: Path) -> str:
    """What a `--repo` names, as tasks store it: a URL as given, a path as its work tree."""
    return named_repository(text, aliases, cwd)
