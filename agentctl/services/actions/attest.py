"""`run attest` and `attest verify`: what a run proved, as signed in-toto Statements.

One bundle (JSON lines, one DSSE envelope each) per run: SLSA provenance, one test-result per
verification check, and agentctl's run predicate last. Every Statement names the same subjects:
the patch (sha256) and the tree it gives on the base commit (gitTree), so a reviewer can check
the bundle against the diff they read or the commit they merge. The run predicate lists the
digest of every Statement before it, so a bundle with one cut out (a failed check's result, the
provenance) does not verify.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import rfc8785

from agentctl import __version__
from agentctl.domain.artifact import Artifact
from agentctl.domain.attestation import (
    BUILD_TYPE,
    BUILDER_ID,
    RUN_PREDICATE,
    SLSA_PROVENANCE,
    TEST_RESULT,
    Json,
    Opened,
    Subject,
    complete,
    envelope,
    listed,
    open_envelope,
    statement,
    test_result,
)
from agentctl.domain.clock import to_iso
from agentctl.domain.enums import ArtifactType
from agentctl.domain.errors import BadInput, IntegrityError, NotFound
from agentctl.domain.patch import Patch
from agentctl.domain.run import Run
from agentctl.domain.task import Task
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.execution.signing import default_key_path, load_public_key, load_signer
from agentctl.services.queries.per_test import ArtifactReads, ReportFiles, per_test_reports

if TYPE_CHECKING:
    from agentctl.domain.audit import Checkpoint
    from agentctl.domain.audit_report import AuditReport
    from agentctl.execution.ed25519_keys import PublicKey


class AttestReads(ArtifactReads, Protocol):
    """What a run's bundle is made from, read in one go: the run, its task, verdict,
    approvals, patch, verification and per-test reports, and the event log's head."""

    def run(self, text: str | None) -> Run: ...
    def task(self, text: str) -> Task: ...
    def verdict(self, run_id: str) -> Verdict | None: ...
    def approvals(self, run_id: str) -> list[Approval]: ...
    def artifacts(self, run_id: str) -> list[Artifact]: ...
    def patch(self, run_id: str) -> Patch | None: ...
    def verification(self, run_id: str) -> VerificationReport | None: ...
    def event_head(self) -> tuple[int, str] | None: ...


class AttestStore(Protocol):
    """The part of the storage port attesting a run uses (any `Storage` is one): the audit
    and the signed checkpoint, reads, the report files, and where the home keeps its key.
    It writes nothing."""

    @property
    def blobs(self) -> ReportFiles: ...
    @property
    def state_root(self) -> Path: ...
    def reads(self) -> AbstractContextManager[AttestReads]: ...
    def audit(self) -> AuditReport: ...
    def checkpoint(self) -> Checkpoint | None: ...


def signing_key_path(home: Path, key: Path | None) -> Path:
    return key or default_key_path(home)


def signing_public_key(home: Path, key: Path | None) -> PublicKey:
    """The public half of the key `run attest` signs with: `key`, or the home's own (made on
    first use)."""
    return load_signer(signing_key_path(home, key), create=key is None).public


def attest_run(store: AttestStore, run_ref: str | None, *, key: Path | None = None,
               audited: bool = False) -> str:
    """The run's bundle, signed with `key` (default: the state home's key, made on first use).
    The audit trail is verified first unless the caller just did (`audited`)."""
    if not audited:
        audit = store.audit()
        if not audit.ok:
            raise IntegrityError(f"refusing to attest: the audit trail does not verify: "
                                 f"{audit.failure()}")
    with store.reads() as views:
        run = views.run(run_ref)
        verdict = views.verdict(run.run_id)
        if verdict is None:
            raise NotFound(f"run {run.run_id} has no verdict yet (status {run.status.value})")
        approvals = views.approvals(run.run_id)
        patch = next((a for a in views.artifacts(run.run_id)
                      if a.type is ArtifactType.PATCH_UNIFIED_DIFF and a.name == "patch.diff"),
                     None)
        recorded = views.patch(run.run_id)
        report = views.verification(run.run_id)
        task = views.task(run.task_id)
        head = views.event_head()
        tests = per_test_reports(views, store.blobs, report)
    if patch is None:
        raise NotFound(f"run {run.run_id} has no patch.diff: there is nothing to attest")
    tree = verdict.tree_id or (recorded.tree_id if recorded else None)
    subjects = [Subject("patch.diff", {"sha256": patch.sha256})]
    if tree:
        subjects.append(Subject("tree", {"gitTree": tree}))
    spec = run.execution_spec
    settings = spec.agent_settings
    provenance: Json = {
        "buildDefinition": {
            "buildType": BUILD_TYPE,
            "externalParameters": {
                "task": {"taskId": task.task_id, "type": task.task_type.value,
                         "instruction": task.instruction, "baseRef": task.base_ref},
                "specDigest": run.spec_digest},
            "internalParameters": {"runId": run.run_id, "autonomy": spec.autonomy_level.value},
            "resolvedDependencies": [
                {"uri": f"git+file://{spec.repository}", "digest": {"gitCommit": run.base_commit}},
                {"name": "agent", "uri": f"agentctl-agent:{spec.agent}",
                 **({"digest": {"sha256": spec.agent_digest.removeprefix("sha256:")}}
                    if spec.agent_digest else {}),
                 "annotations": {"model": (settings.model if settings and settings.model
                                           else "unavailable")}},
            ]},
        "runDetails": {
            "builder": {"id": BUILDER_ID, "version": {"agentctl": __version__}},
            "metadata": {"invocationId": run.run_id, "startedOn": to_iso(run.created_at),
                         "finishedOn": to_iso(verdict.decided_at)}},
    }
    named = [("provenance", SLSA_PROVENANCE,
              signed_bytes(statement(subjects, SLSA_PROVENANCE, provenance)))]
    named += [(check.name, TEST_RESULT, signed_bytes(statement(
        subjects, TEST_RESULT, test_result(check, tests.get(check.name)))))
              for check in (report.checks if report else ())]
    checkpoint = store.checkpoint()
    predicate = _run_predicate(run, verdict, approvals, head, None if checkpoint is None else
                               {"seq": checkpoint.seq, "hash": checkpoint.hash})
    statements = [payload for _, _, payload in named]
    statements.append(signed_bytes(statement(subjects, RUN_PREDICATE, {
        **predicate, "statements": [listed(*entry) for entry in named]})))
    signer = load_signer(signing_key_path(store.state_root, key), create=key is None)
    return "".join(envelope(payload, signer.public.keyid, signer.sign) + "\n"
                   for payload in statements)


def signed_bytes(document: Json) -> bytes:
    """A Statement as the bytes that are signed: its RFC 8785 form, which any JCS
    implementation rebuilds from the parsed Statement (see `domain/attestation.py`)."""
    return rfc8785.dumps(cast(Any, document))


def _run_predicate(run: Run, verdict: Verdict, approvals: Sequence[Approval],
                   head: tuple[int, str] | None, checkpoint: Json | None) -> Json:
    return {"runId": run.run_id, "taskId": run.task_id, "specDigest": run.spec_digest,
            "baseCommit": run.base_commit,
            "verdict": {"status": verdict.status.value,
                        "prEligibility": verdict.pr_eligibility.value,
                        "reasons": list(verdict.reasons), "decidedAt": to_iso(verdict.decided_at),
                        "decidedBy": verdict.decided_by,
                        "chain": [{"check": link.check, "passed": link.passed,
                                   "detail": link.detail} for link in verdict.chain]},
            "approvals": [{"decision": a.decision.value, "by": a.by, "reason": a.reason,
                           "at": to_iso(a.created_at)} for a in approvals],
            "audit": {"head": None if head is None else {"seq": head[0], "hash": head[1]},
                      "checkpoint": checkpoint}}


@dataclass(frozen=True, slots=True)
class Verified:
    keyid: str | None  # None: no key, the signatures were not checked
    predicate_types: tuple[str, ...]
    subjects: tuple[Subject, ...]
    checks: tuple[str, ...]  # the checks whose test results the bundle holds


@dataclass(frozen=True, slots=True)
class Trust:
    """Where a verified bundle's trust comes from: said with every verification, since a
    signature by the home's own key proves no more than that this home made the bundle."""

    # "pinned" (--key), "home" (this state home's key) or "not checked" (asked for with
    # --insecure-ignore-signatures)
    source: str
    keyid: str | None
    key: Path | None

    def says(self) -> str:
        if self.source == "pinned":
            return f"signed by the key you pinned, {self.keyid} ({self.key})"
        if self.source == "home":
            return (f"signed by this state home's own key {self.keyid} ({self.key}): that only "
                    "shows this home made it; pin the signer's public key with --key")
        return ("signatures not checked (--insecure-ignore-signatures): integrity only, the "
                "statements agree with each other and nobody vouches for them; pin the "
                "signer's public key with --key")

    def as_json(self) -> Json:
        return {"source": self.source, "keyid": self.keyid,
                "key": None if self.key is None else str(self.key), "says": self.says()}


def trusted_key(home: Path, pinned: Path | None, *,
                ignore_signatures: bool = False) -> tuple[PublicKey | None, Trust]:
    """The key to check a bundle against: the pinned one, else this home's (never made here:
    verifying is no reason to mint a key). With neither, BadInput, as cosign and gh refuse to
    verify without a key or identity: a bundle whose signatures nobody checked is not
    "verified"; only --insecure-ignore-signatures asks for integrity alone."""
    if ignore_signatures:
        if pinned is not None:
            raise BadInput("--key and --insecure-ignore-signatures contradict each other")
        return None, Trust("not checked", None, None)
    if pinned is not None:
        public = load_public_key(pinned)
        return public, Trust("pinned", public.keyid, pinned)
    path = default_key_path(home)
    if not path.exists():
        raise BadInput("no key to check the bundle's signatures against (this state home has "
                       "none): pin the signer's public key with --key PUB, or pass "
                       "--insecure-ignore-signatures to check only that its statements agree")
    public = load_signer(path, create=False).public
    return public, Trust("home", public.keyid, path)


def verify_bundle(text: str, key: PublicKey | None, *, patch: Path | None = None,
                  tree: str | None = None) -> Verified:
    """Every envelope signed by `key` (None: not checked), (when given) the patch's sha256 and
    the commit's tree among every Statement's subjects, and the bundle complete: the statements
    the run predicate lists, each as listed, and no other. IntegrityError naming the first
    that fails."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise BadInput("the bundle holds no envelope")
    patch_digest = hashlib.sha256(patch.read_bytes()).hexdigest() if patch else None
    opened_all: list[Opened] = []
    for number, line in enumerate(lines, start=1):
        try:
            opened = open_envelope(line, key.keyid if key else None, key.verify if key else None)
        except ValueError as error:
            raise IntegrityError(f"envelope {number}: {error}") from None
        digests = {(k, v) for s in opened.subjects for k, v in s.digest.items()}
        if patch_digest and ("sha256", patch_digest) not in digests:
            raise IntegrityError(f"envelope {number} ({opened.predicate_type}) is not about "
                                 f"this patch (sha256 {patch_digest[:12]})")
        if tree and ("gitTree", tree) not in digests:
            raise IntegrityError(f"envelope {number} ({opened.predicate_type}) is not about "
                                 f"this commit's tree {tree[:12]}")
        if opened_all and opened.subjects != opened_all[0].subjects:
            raise IntegrityError(f"envelope {number} ({opened.predicate_type}) is about other "
                                 "subjects than envelope 1")
        opened_all.append(opened)
    try:
        checks = complete(opened_all)
    except ValueError as error:
        raise IntegrityError(str(error)) from None
    return Verified(key.keyid if key is not None else None,
                    tuple(o.predicate_type for o in opened_all), opened_all[-1].subjects, checks)
