"""What a judge found: a record the rules judge and the intent rules both produce."""

from __future__ import annotations

from dataclasses import dataclass

from agentctl.domain.enums import Severity


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeFinding:
    severity: Severity
    category: str
    message: str
    file_path: str | None = None
    line_number: int | None = None
    blocks_auto_pr: bool = False
