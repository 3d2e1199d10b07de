"""`pr create`: a downstream action on an eligible (or approved) verdict, never part of the run.

The branch is pushed, then the forge is asked to open the PR (or to update the one this run
opened, or to adopt the open one the branch already has), and only then is the PR recorded. Any
failure after `PrRequested` (the push, the forge, recording what the forge answered) leaves
`PrFailed` beside it and no PR record; the commit is dated by the verdict, so a retry pushes the
same commit and asks again.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agentctl.config.schema import DEFAULT_PR, PrSettings
from agentctl.domain import ids
from agentctl.domain.artifact import Artifact, is_safe_for_pr
from agentctl.domain.audit import digest
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    EventType,
    Forge,
    PrEligibility,
    PrState,
    RedactionStatus,
)
from agentctl.domain.errors import IntegrityError, NotFound, PolicyDenied
from agentctl.domain.events import NewEvent
from agentctl.domain.pull_request import PullRequest, check_pr_target, default_branch
from agentctl.domain.verdict import may_open_pr
from agentctl.execution.pull_requests.forge import (
    TIMEOUT_SECONDS,
    ForgeClient,
    ForgeTarget,
    PrFields,
    RemotePr,
    client,
    detect,
    token_for,
)
from agentctl.execution.pull_requests.pr_branch import (
    build_commit,
    create_branch,
    open_repository,
    push_commit,
    remote_url,
    tree_of,
)
from agentctl.services.actions.attest import AttestReads, AttestStore, attest_run
from agentctl.services.actions.pr_body import PrFacts, commit_message, pr_body, pr_title
from agentctl.services.actions.pr_facts import FactReads, gather
from agentctl.services.actions.pr_status import PrReads, PrWork
from agentctl.services.ports import Blobs
from agentctl.services.unit_of_work import Repository

if TYPE_CHECKING:
    import git

MAX_COMMENT_CHARS = 65_536


class OpeningReads(PrReads, FactReads, AttestReads, Protocol):
    """The run, its earlier pull requests, the facts its body tells, and (for `--attest`) what
    its bundle is made from."""


class OpeningWork(PrWork, Protocol):
    """What `pr create` writes: its events, and at the end the body and the PR's record."""

    @property
    def artifacts(self) -> Repository[Artifact]: ...


class OpeningStore(AttestStore, Protocol):
    """The part of the storage port `pr create` uses (any `Storage` is one): attesting the
    run (`AttestStore`), the artifact store it reads the patch from and writes the body to,
    and its own reads and writes."""

    @property
    def blobs(self) -> Blobs: ...
    def reads(self) -> AbstractContextManager[OpeningReads]: ...
    def unit_of_work(self) -> AbstractContextManager[OpeningWork]: ...


@dataclass(frozen=True, slots=True)
class PrRequest:
    run: str | None
    branch: str | None
    remote: str | None
    draft: bool
    by: str
    attest: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """Everything `pr create` decided before writing anything: checked, nothing changed yet."""

    facts: PrFacts
    patch: Artifact
    branch: str
    prior: PullRequest | None  # the record this run's earlier `pr create` left on this branch
    remote: str | None
    target: ForgeTarget
    forge: ForgeClient | None
    fields: PrFields
    attestation: str | None
    pr_id: str
    repo: git.Repo


def create_pull_request(store: OpeningStore, request: PrRequest, settings: PrSettings = DEFAULT_PR,
                        *, clock: Clock = utcnow,
                        timeout: float = TIMEOUT_SECONDS) -> PullRequest:
    plan = _plan(store, request, settings, timeout)
    _append(store, plan, EventType.PR_REQUESTED, clock, {
        "branch": plan.branch, "draft": plan.fields.draft, "remote": plan.remote,
        "forge": plan.target.kind.value, "by": request.by})
    try:
        commit = _commit_and_push(store, plan)
        remote_pr, adopted = None, False
        if plan.forge is not None:
            remote_pr, adopted = _open_or_update(plan.forge, plan.fields, plan.prior)
            if plan.attestation is not None and plan.attestation not in plan.fields.body:
                plan.forge.comment(remote_pr.number, _comment(plan.attestation))
        create_branch(plan.repo, plan.branch, commit)
        return _record(store, plan, request, clock, commit=commit, remote_pr=remote_pr,
                       adopted=adopted)
    except Exception as error:  # whatever failed after PrRequested, the log says so
        _append(store, plan, EventType.PR_FAILED, clock, {
            "forge": plan.target.kind.value, "error": _one_line(error)})
        raise


def _record(store: OpeningStore, plan: _Plan, request: PrRequest, clock: Clock, *, commit: str,
            remote_pr: RemotePr | None, adopted: bool) -> PullRequest:
    """The body, the PR record and PrCreated (PrUpdated) in one transaction, from what the
    forge answered: an answer it cannot store fails like the forge call did."""
    run = plan.facts.run
    blob = store.blobs.put_bytes(plan.fields.body.encode())
    body_artifact = Artifact(
        artifact_id=ids.new_id("artifact"), run_id=run.run_id, attempt_id=plan.patch.attempt_id,
        produced_by_step=plan.pr_id, type=ArtifactType.PR_BODY_DRAFT, name="pr-body.md",
        uri=blob.uri, sha256=blob.sha256, size_bytes=blob.size_bytes,
        redaction_status=RedactionStatus.CLEAN, visibility=ArtifactVisibility.SAFE_FOR_PR,
        created_at=clock(), spec_digest=run.spec_digest,
        metadata={"producer": "pr create", "branch": plan.branch},
    )
    prior = plan.prior
    pull_request = PullRequest(
        pr_id=plan.pr_id, run_id=run.run_id, repository=plan.facts.task.repository or "",
        branch=plan.branch, commit_sha=commit, base_commit=run.base_commit, remote=plan.remote,
        draft=remote_pr.draft if remote_pr else plan.fields.draft,
        body_artifact=body_artifact.artifact_id, url=remote_pr.url if remote_pr else None,
        created_by=prior.created_by if prior else request.by,
        created_at=prior.created_at if prior else clock(), forge=plan.target.kind,
        number=remote_pr.number if remote_pr else None,
        base=plan.fields.base if remote_pr else None,
        state=remote_pr.state if remote_pr else PrState.BRANCH,
    )
    with store.unit_of_work() as uow:
        uow.artifacts.add(body_artifact)
        if prior is None:
            uow.pull_requests.add(pull_request)
        else:
            uow.pull_requests.get(prior.pr_id)
            uow.pull_requests.save(pull_request)
        uow.events.append(_event(plan, EventType.PR_UPDATED if prior else EventType.PR_CREATED,
                                 clock, {
            "branch": plan.branch, "commit": commit, "remote": plan.remote,
            "draft": pull_request.draft, "forge": plan.target.kind.value,
            "number": pull_request.number, "url": pull_request.url, "adopted": adopted,
            "bodyArtifact": body_artifact.artifact_id, "bodySha256": body_artifact.sha256,
            "artifactDigests": {body_artifact.artifact_id: digest(body_artifact)},
            "pullRequestDigest": digest(pull_request)}))
    return pull_request


def _plan(store: OpeningStore, request: PrRequest, settings: PrSettings, timeout: float) -> _Plan:
    """Every check before anything is written: the audit, the verdict, the patch, the branch,
    the forge and its token."""
    check_pr_target(request.remote, request.branch)
    audit = store.audit()  # nothing is built on records that do not verify
    if not audit.ok:
        raise IntegrityError(f"refusing to open a PR: the audit trail does not verify: "
                             f"{audit.failure()}")
    with store.reads() as reads:
        run = reads.run(request.run)
        facts, artifacts = gather(store.blobs, reads, run)
        earlier = reads.pull_requests(run.run_id)
    verdict, task = facts.verdict, facts.task
    allowed, why = may_open_pr(verdict.pr_eligibility, facts.approvals)
    if not allowed:
        raise PolicyDenied(f"run {run.run_id} may not open a PR: {why} (verdict "
                           f"{verdict.status.value}: {'; '.join(verdict.reasons)})")
    patch = _patch_artifact(artifacts)
    if not is_safe_for_pr(patch):
        raise PolicyDenied(f"run {run.run_id} may not open a PR: its patch holds what looks like "
                           "a secret (patch.diff is kept INTERNAL_ONLY); a PR would publish it")
    problem = store.blobs.verify(patch.uri, patch.sha256)
    if problem:
        raise IntegrityError(f"patch artifact {patch.artifact_id}: {problem}")
    branch = request.branch or (earlier[-1].branch if earlier else
                                default_branch(task.task_type, run.run_id))
    prior = next((p for p in reversed(earlier) if p.branch == branch), None)
    remote = request.remote or (prior.remote if prior else None)
    repo = open_repository(task.repository or "", branch, reuse=prior is not None)
    target = detect(remote_url(repo, remote), forge=settings.forge, api_url=settings.api_url,
                    repository=settings.repository) if remote else ForgeTarget(Forge.NONE, "", "")
    forge = client(target, token_for(target.kind), timeout=timeout) \
        if target.kind is not Forge.NONE else None
    attestation = _details(attest_run(store, run.run_id, audited=True)) \
        if request.attest else None
    fields = PrFields(title=pr_title(task), head=branch, base=settings.base or task.base_ref,
                      body=pr_body(facts, attestation=attestation),
                      draft=request.draft or verdict.pr_eligibility is PrEligibility.DRAFT_ONLY,
                      labels=settings.labels, reviewers=settings.reviewers)
    return _Plan(facts=facts, patch=patch, branch=branch, prior=prior, remote=remote,
                 target=target, forge=forge, fields=fields, attestation=attestation,
                 pr_id=prior.pr_id if prior else ids.new_id("pr"), repo=repo)


def _commit_and_push(store: OpeningStore, plan: _Plan) -> str:
    """The commit (dated by the verdict, so a retry rebuilds the very same one), checked against
    the tree the verdict verified, pushed when a remote is given."""
    run, verdict = plan.facts.run, plan.facts.verdict
    commit = build_commit(plan.repo, base_commit=run.base_commit,
                          patch=store.blobs.path_for(plan.patch.uri),
                          message=commit_message(plan.facts),
                          date=f"@{int(verdict.decided_at.timestamp())} +0000")
    tree = tree_of(plan.repo, commit)
    if verdict.tree_id is not None and tree != verdict.tree_id:
        raise IntegrityError(f"refusing to open a PR: the commit's tree {tree[:12]} is not the "
                             f"tree {verdict.tree_id[:12]} the verdict verified")
    if plan.remote:
        push_commit(plan.repo, plan.remote, commit, plan.branch)
    return commit


def _event(plan: _Plan, type_: EventType, clock: Clock, payload: dict[str, object]) -> NewEvent:
    run = plan.facts.run
    return NewEvent(type=type_, created_at=clock(), task_id=run.task_id, run_id=run.run_id,
                    payload={"prId": plan.pr_id, **payload})


def _append(store: OpeningStore, plan: _Plan, type_: EventType, clock: Clock,
            payload: dict[str, object]) -> None:
    with store.unit_of_work() as uow:
        uow.events.append(_event(plan, type_, clock, payload))


def _open_or_update(forge: ForgeClient, fields: PrFields,
                    prior: PullRequest | None) -> tuple[RemotePr, bool]:
    """The PR this run opened, updated; else the branch's open one, adopted; else a new one."""
    if prior is not None and prior.number is not None and prior.forge is forge.kind:
        return forge.update(prior.number, fields), False
    found = forge.find_open(fields.head)
    if found is not None:
        return forge.update(found.number, fields), True
    return forge.create(fields), False


def _one_line(error: Exception) -> str:
    """The error's first line, storable whatever the forge sent (a lone surrogate escaped)."""
    lines = str(error).strip().splitlines()
    line = (lines[0] if lines else type(error).__name__)[:500]
    return line.encode("utf-8", "backslashreplace").decode("utf-8")


def _details(bundle: str) -> str:
    """The bundle as a collapsed block: in the body when it fits, else as a comment."""
    return ("<details><summary>in-toto attestation (DSSE, verify with "
            "<code>agentctl attest verify</code>)</summary>\n\n```jsonl\n" + bundle + "```\n"
            "</details>")


def _comment(text: str) -> str:
    if len(text) > MAX_COMMENT_CHARS:
        return ("The in-toto attestation bundle is larger than a comment may be; produce it with "
                "`agentctl run attest`.")
    return text


def _patch_artifact(artifacts: list[Artifact]) -> Artifact:
    for artifact in artifacts:
        if artifact.type is ArtifactType.PATCH_UNIFIED_DIFF and artifact.name == "patch.diff":
            return artifact
    raise NotFound("the run has no patch.diff artifact")

