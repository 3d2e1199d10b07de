"""The agent CLI's own stream (JSON lines it appends to a file), read as it grows, and what it
claims about its usage, bounded: the stream is written by a process agentctl does not trust, so
a figure no model could report is a finding, never a lowered budget."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

# What one stream event may claim: above these it is no model's figure but a forged line.
MAX_TOKENS_CLAIMED = 100_000_000
MAX_COST_CLAIMED_USD = 100_000.0


@dataclass
class StreamState:
    """What the agent's own stream said, read as it grows."""

    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None  # how the agent said it ended, when it did not finish its work
    finished: bool = False  # a final result was seen
    denials: list[str] = field(default_factory=list)  # the agent's own permission denials
    turns: int = 0
    commands: list[tuple[str, int | None]] = field(default_factory=list)  # (command, exit code)
    # tool results as the stream reports them, in the PostToolUse hook's shape, and whether
    # the tool failed (Claude Code: read here instead of starting a hook process per result)
    results: list[tuple[dict[str, object], bool]] = field(default_factory=list)
    extra: dict[str, object] = field(default_factory=dict)

    usage_findings: list[str] = field(default_factory=list)  # figures refused as impossible

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def token_count(self, value: object, what: str) -> int:
        """A token figure the stream claims; a negative, fractional or absurd one counts 0
        and is a finding (budgets must never be lowered by a line some process wrote)."""
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int) \
                or not 0 <= value <= MAX_TOKENS_CLAIMED:
            self.usage_findings.append(f"{what} = {str(value)[:40]} is not a token count "
                                       f"between 0 and {MAX_TOKENS_CLAIMED}: ignored")
            return 0
        return value

    def claim_cost(self, value: object) -> None:
        """A total cost the stream claims: finite, non-negative, bounded and never below what
        was already reported (a total only grows); otherwise a finding, and the cost kept."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not 0 <= value <= MAX_COST_CLAIMED_USD:  # NaN fails both comparisons
            self.usage_findings.append(f"total_cost_usd = {str(value)[:40]} is not a cost "
                                       f"between 0 and {MAX_COST_CLAIMED_USD:g}: ignored")
            return
        if value < self.cost_usd:
            self.usage_findings.append(f"total_cost_usd = {value:g} is below the "
                                       f"{self.cost_usd:g} already reported: ignored")
            return
        self.cost_usd = float(value)


class StreamReader:
    """Reads complete JSON lines appended to the stream file since the last poll."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""

    def lines(self) -> list[dict[str, object]]:
        try:
            with self.path.open("rb") as stream:
                stream.seek(self._offset)
                data = stream.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        data = self._partial + data
        *complete, self._partial = data.split(b"\n")
        events = []
        for line in complete:
            try:
                value = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                continue  # the CLI's own stderr shares the file
            if isinstance(value, dict):
                events.append(value)
        return events
