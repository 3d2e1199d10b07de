"""What `audit verify` found: the report the store's own check gives (`Storage.audit`), a value of
the domain so that the port, the store and the use cases that verify (a PR, an attestation) share it."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentctl.domain.audit import Checkpoint, CheckpointState, Problem
from agentctl.domain.events import ChainBreak


@dataclass(frozen=True, slots=True)
class AuditReport:
    events: int
    head: tuple[int, str] | None
    checkpoint: Checkpoint | None
    checkpoint_state: CheckpointState
    breaks: list[ChainBreak] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    records: int = 0

    @property
    def ok(self) -> bool:
        return not self.breaks and not self.problems

    def failure(self) -> str:
        """One line naming the first thing that does not verify."""
        if self.breaks:
            first = self.breaks[0]
            text = f"event log broken at event {first.seq}: {first.problem}"
        else:
            problem = self.problems[0]
            text = f"{problem.what}: {problem.detail}"
        more = len(self.breaks) + len(self.problems) - 1
        return text + (f" (and {more} more)" if more else "")
