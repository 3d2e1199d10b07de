"""A pull-request branch created from a run's verdict: a downstream action, never part of the run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agentctl.domain.enums import Forge, PrState, TaskType
from agentctl.domain.errors import BadInput


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


def check_pr_target(remote: str | None, branch: str | None) -> None:
    """BadInput for a remote or branch git would read as something else: an option (`--remote
    '--receive-pack=...'` reaching `git push` as one) or, for a branch, a full ref name
    (`refs/heads/main` would make `refs/heads/refs/heads/main`). Checked before anything else."""
    if remote is not None:
        if not remote.strip() or remote.startswith("-") or any(c in remote for c in "\0\n\r"):
            raise BadInput(f"invalid remote {remote!r}: expected a remote name, URL or path "
                           "that does not start with '-'")
    if branch is not None:
        if branch.startswith("-"):
            raise BadInput(f"invalid branch name {branch!r}: a branch may not start with '-'")
        if branch.startswith("refs/") or branch == "HEAD":
            raise BadInput(f"invalid branch name {branch!r}: expected a short branch name "
                           "(e.g. agentctl/fix-login), not a full ref name")
