"""Why a step failed, in a few lines: the exception its output ended with, then its last lines.

A failed check or command says `exited with code 1`; the reason (`TypeError: object of type
'IniConfig' has no len()`, `ModuleNotFoundError: No module named 'x'`) is in its output, often
above a page of pytest's summary. Shown in `run show --tree` and `verdict explain`.
"""

from __future__ import annotations

import re

from agentctl.domain.ansi import strip_ansi

TAIL_LINES = 5
LINE_WIDTH = 200

# `TypeError: ...`, `pkg.errors.BadThing: ...`, pytest's `E   ModuleNotFoundError: ...`
_EXCEPTION = re.compile(
    r"^(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)"
    r"(?::\s.*)?)$")
# pytest's section rules (`==== short test summary info ====`, `____ test_x ____`): no news
_RULE = re.compile(r"^[=_-]{3,}.*[=_-]{3,}$")


def exception_line(text: str) -> str | None:
    """The last line of `text` that names an exception, as its runner printed it (without
    pytest's `E` margin); None when no line does."""
    found = None
    for line in strip_ansi(text).splitlines():
        match = _EXCEPTION.match(line.strip())
        if match:
            found = match.group(1)
    return None if found is None else _bounded(found)


def output_tail(text: str, *, lines: int = TAIL_LINES,
                workspace: str | None = None) -> tuple[str, ...]:
    """The exception line first (when there is one), then the last `lines` non-blank lines of
    the output, each at most LINE_WIDTH characters; () for an empty output. Paths in the
    attempt's `workspace` (gone once it ended) are shown relative to the checkout they are in."""
    clean = strip_ansi(text)
    if workspace:
        clean = re.sub(re.escape(workspace.rstrip("/")) + r"/(?:(?:repo|verify|base-verify)/)?",
                       "", clean)
    last = [_bounded(line.rstrip()) for line in clean.splitlines()
            if line.strip() and not _RULE.match(line.strip())][-lines:]
    exception = exception_line(clean)
    if exception is None:
        return tuple(last)
    return (exception, *(line for line in last if line.strip().removeprefix("E").strip()
                         != exception))


def _bounded(line: str) -> str:
    return line if len(line) <= LINE_WIDTH else line[:LINE_WIDTH - 1] + "…"
