"""Status colours and small formatting helpers shared by every renderer."""

from __future__ import annotations

import re
from datetime import datetime

_GOOD = {"READY_FOR_RUN", "COMPLETED", "SUCCEEDED", "ALLOWED", "PASSED", "SUCCESS", "ACTIVE",
         "ELIGIBLE_FOR_AUTO_PR", "APPLIES_CLEANLY", "APPROVED", "OPEN", "CLEAN", "REDACTED"}
_WARN = {"SUCCESS_NEEDS_REVIEW", "NEEDS_APPROVAL", "PASSED_WITH_WARNINGS", "PARTIAL",
         "REQUIRES_APPROVAL", "ELIGIBLE_AFTER_HUMAN_APPROVAL", "DRAFT_ONLY", "NEEDS_HUMAN_REVIEW",
         "INCONCLUSIVE", "SKIPPED", "QUEUED", "LEASED", "STARTING", "RUNNING", "STARTED",
         "PREPARING_WORKSPACE", "RUNNING_AGENT", "VERIFYING", "JUDGING", "ACCEPTED", "DRAFT",
         "WARNING", "RAW"}
_DIM = {"CANCELLED", "ARCHIVED", "EXPIRED", "NOT_RUN", "SKIPPED_BY_POLICY", "INFO", "CLOSED"}


def colour(status: object) -> str:
    text = getattr(status, "value", str(status))
    if text in _GOOD:
        return "green"
    if text in _WARN:
        return "yellow"
    if text in _DIM:
        return "dim"
    return "red"


def badge(status: object) -> str:
    text = getattr(status, "value", str(status))
    return f"[{colour(text)}]{text}[/]"


def when(moment: datetime | None) -> str:
    if moment is None:
        return "-"
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def duration(start: datetime | None, end: datetime | None) -> str:
    if start is None or end is None:
        return ""
    seconds = (end - start).total_seconds()
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 120:
        return f"{seconds:.1f}s"
    return f"{seconds / 60:.1f}m"


def escape(text: object) -> str:
    """Text that Rich must not read as markup (paths with [brackets], user input), and that
    the terminal must not obey: control characters are shown, not sent."""
    return printable(str(text)).replace("[", r"\[")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with every control character (escape sequences, carriage returns, backspaces;
    all but tab and newline) written as `\\xNN`: an agent-chosen path or a task's instruction
    cannot move the cursor, recolour or erase what agentctl prints."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def repository_name(repository: str | None) -> str:
    """A repository as a person names it: its folder or the last part of its URL."""
    if not repository:
        return "-"
    name = repository.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name.removesuffix(".git") or repository
