"""`pr create`: a downstream action on an eligible (or approved) verdict, never part of the run."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentctl.domain import ids
from agentctl.domain.artifact import Artifact, is_safe_for_pr
from agentctl.domain.audit import digest
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    EventType,
    PrEligibility,
    RedactionStatus,
)
from agentctl.domain.errors import IntegrityError, NotFound, PolicyDenied
from agentctl.domain.events import NewEvent
from agentctl.domain.pull_request import PullRequest, check_pr_target, default_branch
from agentctl.domain.redaction import Redactor
from agentctl.domain.verdict import may_open_pr
from agentctl.execution.pr_branch import (
    build_commit,
    create_branch,
    open_repository,
    push_commit,
    tree_of,
)
from agentctl.services.audit import verify_store
from agentctl.services.pr_body import commit_message, pr_body
from agentctl.store import Store
from agentctl.store.views import Views


@dataclass(frozen=True, slots=True)
class PrRequest:
    run: str | None
    branch: str | None
    remote: str | None
    draft: bool
    by: str


def create_pull_request(store: Store, request: PrRequest, *, clock: Clock = utcnow) -> PullRequest:
    check_pr_target(request.remote, request.branch)
    audit = verify_store(store)  # nothing is built on records that do not verify
    if not audit.ok:
        raise IntegrityError(f"refusing to open a PR: the audit trail does not verify: "
                             f"{audit.failure()}")
    with Views(store.home) as views:
        run = views.run(request.run)
        verdict = views.verdict(run.run_id)
        if verdict is None:
            raise NotFound(f"run {run.run_id} has no verdict yet (status {run.status.value})")
        approvals = views.approvals(run.run_id)
        task = views.task(run.task_id)
        artifacts = views.artifacts(run.run_id)
    allowed, why = may_open_pr(verdict.pr_eligibility, approvals)
    if not allowed:
        raise PolicyDenied(f"run {run.run_id} may not open a PR: {why} (verdict "
                           f"{verdict.status.value}: {'; '.join(verdict.reasons)})")
    draft = request.draft or verdict.pr_eligibility is PrEligibility.DRAFT_ONLY
    patch = _patch_artifact(artifacts)
    if not is_safe_for_pr(patch):
        raise PolicyDenied(f"run {run.run_id} may not open a PR: its patch holds what looks like "
                           "a secret (patch.diff is kept INTERNAL_ONLY); a PR would publish it")
    problem = store.blobs.verify(patch.uri, patch.sha256)
    if problem:
        raise IntegrityError(f"patch artifact {patch.artifact_id}: {problem}")
    safe = [a for a in artifacts if is_safe_for_pr(a)]
    body = Redactor().clean(pr_body(
        task=task, run=run, verdict=verdict, approvals=approvals,
        touched=_json(store, safe, "touched-files.json"),
        verification=_json(store, safe, "verifier-report.json"),
        judge=_json(store, safe, "judge-report.json"),
        evidence=[a for a in safe if a.artifact_id in verdict.evidence],
    ))
    branch = request.branch or default_branch(task.task_type, run.run_id)
    repository = task.repository or ""
    repo = open_repository(repository, branch)
    pr_id = ids.new_id("pr")
    now = clock()
    with store.unit_of_work() as uow:
        uow.events.append(NewEvent(type=EventType.PR_REQUESTED, created_at=now,
                                   task_id=run.task_id, run_id=run.run_id,
                                   payload={"prId": pr_id, "branch": branch, "draft": draft,
                                            "remote": request.remote, "by": request.by}))
    commit = build_commit(repo, base_commit=run.base_commit, patch=store.blobs.path_for(patch.uri),
                          message=commit_message(task=task, run=run, verdict=verdict))
    tree = tree_of(repo, commit)
    if verdict.tree_id is not None and tree != verdict.tree_id:
        raise IntegrityError(f"refusing to open a PR: the commit's tree {tree[:12]} is not the "
                             f"tree {verdict.tree_id[:12]} the verdict verified")
    if request.remote:
        push_commit(repo, request.remote, commit, branch)
    create_branch(repo, branch, commit)
    blob = store.blobs.put_bytes(body.encode())
    body_artifact = Artifact(
        artifact_id=ids.new_id("artifact"), run_id=run.run_id, attempt_id=patch.attempt_id,
        produced_by_step=pr_id, type=ArtifactType.PR_BODY_DRAFT, name="pr-body.md", uri=blob.uri,
        sha256=blob.sha256, size_bytes=blob.size_bytes, redaction_status=RedactionStatus.CLEAN,
        visibility=ArtifactVisibility.SAFE_FOR_PR, created_at=clock(),
        spec_digest=run.spec_digest, metadata={"producer": "pr create", "branch": branch},
    )
    pull_request = PullRequest(
        pr_id=pr_id, run_id=run.run_id, repository=repository, branch=branch, commit_sha=commit,
        base_commit=run.base_commit, remote=request.remote, draft=draft,
        body_artifact=body_artifact.artifact_id, url=None, created_by=request.by,
        created_at=clock(),
    )
    with store.unit_of_work() as uow:
        uow.artifacts.add(body_artifact)
        uow.pull_requests.add(pull_request)
        uow.events.append(NewEvent(
            type=EventType.PR_CREATED, created_at=pull_request.created_at, task_id=run.task_id,
            run_id=run.run_id, payload={"prId": pr_id, "branch": branch, "commit": commit,
                                        "remote": request.remote, "draft": draft,
                                        "bodyArtifact": body_artifact.artifact_id,
                                        "bodySha256": body_artifact.sha256,
                                        "artifactDigests": {
                                            body_artifact.artifact_id: digest(body_artifact)},
                                        "pullRequestDigest": digest(pull_request)}))
    return pull_request


def _patch_artifact(artifacts: list[Artifact]) -> Artifact:
    for artifact in artifacts:
        if artifact.type is ArtifactType.PATCH_UNIFIED_DIFF and artifact.name == "patch.diff":
            return artifact
    raise NotFound("the run has no patch.diff artifact")


def _json(store: Store, safe: list[Artifact], name: str) -> dict | None:  # type: ignore[type-arg]
    """The newest SAFE_FOR_PR artifact of that name, parsed; nothing else reaches a PR body."""
    for artifact in reversed(safe):
        if artifact.name == name:
            problem = store.blobs.verify(artifact.uri, artifact.sha256)
            if problem:
                raise IntegrityError(f"artifact {artifact.artifact_id} ({name}): {problem}")
            try:
                return json.loads(b"".join(store.blobs.open_chunks(artifact.uri)))
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise IntegrityError(f"artifact {artifact.artifact_id} ({name}) is not valid "
                                     "JSON") from None
    return None
