"""The scrubbed environment for everything agentctl spawns, and the values to redact.

An agent or a verification command sees only what the allowlist keeps (PATH, HOME, locale...)
plus variables explicitly passed through; everything else agentctl inherited, typically tokens,
stays behind. Whatever did reach a child, or looks secret, is handed to the Redactor as a literal
so it never lands in stored evidence even if a command prints it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path

MIN_SECRET_CHARS = 8
# What a run's processes (agent, tools, checks) get unless a kept variable says otherwise:
# Python writes no bytecode (`__pycache__/*.pyc`) into the workspace.
RUN_DEFAULTS = {"PYTHONDONTWRITEBYTECODE": "1"}

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH|SESSION|COOKIE|PRIVATE", re.IGNORECASE
)


def allowed(name: str, allowlist: Sequence[str]) -> bool:
    """Whether `name` is kept: an exact name, or a pattern such as `LC_*` (case-sensitive)."""
    return any(fnmatchcase(name, pattern) for pattern in allowlist)


def looks_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def scrubbed_env(
    allowlist: Sequence[str], passthrough: Sequence[str] = (), *,
    source: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables of `source` (default: os.environ) that the allowlist keeps, the passthrough
    names that are set, then `extra` on top (it wins, e.g. a VIRTUAL_ENV for the workspace)."""
    environ = os.environ if source is None else source
    passed = set(passthrough)
    env = {name: value for name, value in environ.items()
           if name in passed or allowed(name, allowlist)}
    env.update(extra or {})
    return env


VERIFICATION_COLUMNS = "200"


def verification_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment of a verification command: the scrubbed one, with a wide terminal
    (`COLUMNS`), else runners cut their summary lines, and the failing test's name, at 80."""
    return {"COLUMNS": VERIFICATION_COLUMNS, **env}


def secret_values(
    passthrough: Sequence[str] = (), *, source: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    """Values that must be redacted from anything stored, longest first, of 8+ characters:
    every passthrough variable's value (handed to the child on purpose, so presumably a
    credential), and the value of every variable whose name looks secret (TOKEN, KEY, AUTH...),
    allowlisted or not: a scrubbed one may still reach a log through a config file or a
    credential helper, and an allowlisted one was handed to the child.
    """
    environ = os.environ if source is None else source
    passed = set(passthrough)
    values = {
        value for name, value in environ.items()
        if len(value) >= MIN_SECRET_CHARS
        and (name in passed or looks_secret(name))
    }
    return tuple(sorted(values, key=lambda value: (-len(value), value)))


_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][\w.-]*\s*[=:]\s*(.+?)\s*$")
MAX_SECRET_FILE_BYTES = 1 << 20


def secret_file_values(files: Iterable[Path]) -> tuple[str, ...]:
    """The values assigned in secret files (`.env`: `NAME=value` lines), to redact wherever they
    show up: a command may print a file no tool may read (`grep -r PASS .`)."""
    values: list[str] = []
    for path in files:
        try:
            if path.is_symlink() or path.stat().st_size > MAX_SECRET_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            match = _ASSIGNMENT.match(line)
            if match and not line.lstrip().startswith("#"):
                value = match.group(1).strip("'\"")
                if len(value) >= MIN_SECRET_CHARS:
                    values.append(value)
    return tuple(dict.fromkeys(values))
