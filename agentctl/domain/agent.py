"""Which agent a run uses, as a typed value: parsed once from what the user typed, frozen into
the ExecutionSpec as its description (`script:/abs/plan.toml`) and digest, and read back typed."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class AgentKind(StrEnum):
    SCRIPT = "script"
    PATCH = "patch"
    COMMAND = "command"
    NOOP = "noop"


@dataclass(frozen=True, slots=True)
class AgentSpec:
    kind: AgentKind
    value: str = ""  # the plan or diff file (absolute), or the command line
    digest: str | None = None  # sha256 of the file the run was given, so a changed one is refused

    def describe(self) -> str:
        return self.kind.value if self.kind is AgentKind.NOOP else f"{self.kind.value}:{self.value}"

    @classmethod
    def frozen(cls, described: str, digest: str | None) -> AgentSpec:
        """The spec as `describe` froze it into an ExecutionSpec (already validated then)."""
        kind, _, value = described.partition(":")
        return cls(AgentKind(kind), value, digest)
