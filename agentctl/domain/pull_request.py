"""A pull-request branch created from a run's verdict: a downstream action, never part of the run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agentctl.domain.enums import Forge, PrState, TaskType


@dataclass(frozen=True, slots=True, kw_only=True)
class PullRequest:
    pr_id: str
    run_id: str
    repository: str
    branch: str
    commit_sha: str
    base_commit: str
    remote: str | None
    draft: bool
    body_artifact: str
    url: str | None
    created_by: str
    created_at: datetime
    forge: Forge = Forge.NONE
    number: int | None = None
    base: str | None = None  # the branch it merges into; None when no forge holds it
    state: PrState = PrState.BRANCH


def default_branch(task_type: TaskType, run_id: str) -> str:
    """`agentctl/<task-type>-<short run id>`; the id's tail, since its head is a timestamp."""
    return f"agentctl/{task_type.value.replace('_', '-')}-{run_id[-8:].lower()}"
