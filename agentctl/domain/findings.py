"""What a judge reads and finds: the diff's lines and the finding records that the rules judge,
the intent rules and the harness rules all produce."""

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


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffLine:
    path: str
    line_number: int | None
    added: bool
    text: str
