"""Which path a benchmark's trees took, and whose it was: views of the tree cache or full
checkouts, as root or as a normal user. The figures differ by several times between them, and
most people run agentctl as a normal user, so every report says which it measured."""

from __future__ import annotations

import os
import pwd
import re
from pathlib import Path

_KEY = re.compile(r"[0-9a-f]{32}")  # a tree cache entry's folder name


def whose() -> str:
    """'root', or 'user NAME' for anyone else."""
    uid = os.geteuid()
    if uid == 0:
        return "root"
    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"user {uid}"


def in_process(views: bool, refusal: str | None) -> str:
    """The line for a benchmark that prepares trees in its own process (`overlay.supported`
    answered `views`; `refusal` is `overlay.refusal()`)."""
    if views:
        where = "" if os.geteuid() == 0 else ", mounted in a user namespace of agentctl's own"
        return f"path: views of the tree cache{where}, as {whose()}"
    return (f"path: full checkouts (no views: {refusal or 'refused'}), as {whose()}")


def from_home(home: Path) -> str:
    """The line for a benchmark that runs the agentctl command with state home `home`, after a
    run that could have filled its tree cache: entries there mean the runs' trees were views."""
    trees = home / "trees"
    entries = [p for p in trees.iterdir() if _KEY.fullmatch(p.name)] if trees.is_dir() else []
    if entries:
        return f"path: views of the tree cache ({len(entries)} entries), as {whose()}"
    return (f"path: full checkouts (the tree cache stayed empty: see `agentctl doctor`), "
            f"as {whose()}")
