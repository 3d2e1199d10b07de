"""A unified diff coloured as `git diff` colours it (for a terminal only)."""

from __future__ import annotations

from agentctl.cli.render.style import printable

_RESET = "\x1b[m"
_STYLES = (("diff --git", "\x1b[1m"), ("index ", "\x1b[1m"), ("+++", "\x1b[1m"),
           ("---", "\x1b[1m"), ("@@", "\x1b[36m"), ("+", "\x1b[32m"), ("-", "\x1b[31m"))


def coloured(diff: str) -> str:
    """Every line of `diff` in its colour; control characters in it are shown, not obeyed."""
    lines = []
    for line in printable(diff).splitlines():
        style = next((s for start, s in _STYLES if line.startswith(start)), "")
        lines.append(f"{style}{line}{_RESET}" if style else line)
    return "\n".join(lines) + "\n"
