"""What every tool call is given, kept apart from the tools so that the file tools and the
shell runner can both use it without importing each other."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.redaction import Redactor
from agentctl.domain.spec import PatchBoundary, ToolPolicy
from agentctl.execution.agents.guards import BudgetGuard
from agentctl.execution.git import WorkspaceGit
from agentctl.execution.process import Confiner


@dataclass(frozen=True, slots=True)
class ToolContext:
    workspace: Path
    policy: ToolPolicy
    boundary: PatchBoundary
    env: Mapping[str, str]  # already scrubbed
    redactor: Redactor
    scratch: Path  # private, outside the workspace: shell output lands here, not in the diff
    git: WorkspaceGit  # agentctl's own git over the workspace: never the agent's .git config
    should_stop: Callable[[], bool] | None = None
    budget: BudgetGuard | None = None  # the wall and output budget a call may not run past
    confine: Confiner | None = None  # where shell.run runs: the sandbox (None: on the host)


class ToolFailure(Exception):
    """An ordinary tool failure; `execute` answers it as ok=False."""
