"""COLLECT_ARTIFACTS: the workspace diff becomes the run's Patch, boundary-checked and apply-checked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agentctl.domain import ids
from agentctl.domain.agent import AgentKind, AgentSpec
from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    PatchApplyStatus,
    RedactionStatus,
    StepType,
)
from agentctl.domain.errors import BadInput
from agentctl.domain.held_secrets import held, held_secret_findings
from agentctl.domain.judge import DiffLine, JudgeFinding
from agentctl.domain.patch import FileChange, Patch, check_boundary, compute_stats
from agentctl.domain.redaction import Redactor
from agentctl.execution.agents.spec import load_plan, read_pinned
from agentctl.execution.redact_stream import redact_file
from agentctl.execution.workspaces.patch_collector import collect_patch
from agentctl.execution.workspaces.tree_edit import patched_tree, small_and_whole
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.evidence import file_artifact, json_artifact


@dataclass(frozen=True, slots=True)
class CollectedEvidence:
    patch: Patch | None
    diff_lines: tuple[DiffLine, ...]  # redacted: what the judge may see
    evidence: tuple[str, ...]  # artifact ids: patch.diff, touched-files.json
    diff: Path | None = None  # the patch, as collected (what is applied for verification)
    safe_diff: Path | None = None  # the diff file, when it is SAFE_FOR_PR (no secrets found)
    # the secrets the agent held ([env] passthrough), and where the patch carries one
    held_secrets: tuple[JudgeFinding, ...] = ()
    # patched files no recorded call changed (written while none ran, or after the last)
    unattributed: tuple[str, ...] = ()


def collect(ctx: AttemptContext) -> CollectedEvidence:
    spec = ctx.spec
    with ctx.step(StepType.COLLECT_ARTIFACTS, "collect the patch") as step:
        leftover = ctx.reap()  # nothing the agent started may touch the files from here on
        if leftover:
            step.note(leftoverProcessesKilled=leftover)
        diff_path = ctx.scratch / "patch.diff"
        collected = collect_patch(ctx.dirs, spec.base_commit, diff_path, spec.patch_boundary,
                                  should_stop=ctx.stop)
        if collected.excluded:
            step.note(excludedGenerated=len(collected.excluded))
        if collected.empty:
            step.note(empty=True)
            return CollectedEvidence(None, (), ())
        redacted = ctx.scratch / "patch.redacted.diff"
        secrets = redact_file(diff_path, redacted, ctx.redactor)
        if secrets:  # the true patch stays internal; people and judges see the redacted copy
            diff = file_artifact(ctx.ledger.blobs, diff_path, name="patch.diff",
                                 type_=ArtifactType.PATCH_UNIFIED_DIFF,
                                 visibility=ArtifactVisibility.INTERNAL_ONLY,
                                 redaction=RedactionStatus.RAW)
            step.add(diff)
            step.add(file_artifact(ctx.ledger.blobs, redacted, name="patch.redacted.diff",
                                   type_=ArtifactType.PATCH_UNIFIED_DIFF,
                                   visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER,
                                   redaction=RedactionStatus.REDACTED))
        else:
            diff = file_artifact(ctx.ledger.blobs, diff_path, name="patch.diff",
                                 type_=ArtifactType.PATCH_UNIFIED_DIFF,
                                 visibility=ArtifactVisibility.SAFE_FOR_PR,
                                 redaction=RedactionStatus.CLEAN)
            step.add(diff)
        changes = collected.changes
        stats = compute_stats(changes)
        boundary = check_boundary(changes, spec.patch_boundary)
        unattributed = _unattributed(ctx, changes)
        if unattributed:
            step.note(unattributed=len(unattributed))
        step.add(json_artifact(ctx.ledger.blobs, {
            "baseCommit": spec.base_commit, "files": changes, "stats": stats,
            "boundaryCheck": boundary, "unattributed": unattributed,
            "excluded": [{"path": path, "reason": "ignore_generated"}
                         for path in collected.excluded],
        }, name="touched-files.json", type_=ArtifactType.TOUCHED_FILES, redactor=ctx.redactor))
        dirs = ctx.dirs
        tree, apply_error = patched_tree(
            dirs.git, spec.base_commit, diff_path, ctx.scratch / "apply.index",
            named=collected.named,
            whole=dirs.index if small_and_whole(dirs.index, dirs.base) else None)
        if tree is not None and tree != collected.tree:
            apply_error = (f"applied to its base the patch gives tree {tree[:12]}, not the "
                           f"work tree's {collected.tree[:12]}")
            tree = None
        step.note(files=stats.files_changed, additions=stats.additions,
                  deletions=stats.deletions, boundaryPassed=boundary.passed, secrets=secrets,
                  tree=tree)
        patch = Patch(
            patch_id=ids.new_id("patch"), run_id=ctx.ledger.lease.run_id,
            attempt_id=ctx.ledger.lease.attempt_id, base_commit=spec.base_commit,
            unified_diff_artifact=diff.artifact_id, file_changes=_redacted(changes, ctx.redactor),
            stats=stats,
            boundary_check=boundary,
            apply_status=PatchApplyStatus.APPLIES_CLEANLY if tree is not None
            else PatchApplyStatus.DOES_NOT_APPLY,
            apply_error=apply_error, created_at=ctx.ledger.now(), tree_id=tree,
        )
        step.record(patch)
    diff_lines = tuple(replace(line, text=ctx.redactor.clean(line.text))
                       for line in collected.diff_lines)
    return CollectedEvidence(patch, diff_lines, tuple(a.artifact_id for a in step.artifacts),
                             diff=diff_path, safe_diff=None if secrets else diff_path,
                             unattributed=tuple(ctx.redactor.clean(p) for p in unattributed),
                             held_secrets=tuple(held_secret_findings(
                                 held_secrets(ctx), collected.diff_lines, ctx.redactor.clean)))


def _unattributed(ctx: AttemptContext, changes: Sequence[FileChange]) -> list[str]:
    """The patch's paths no recorded call changed, and what changed while no call ran (the
    agent's leftover processes are gone by now: nothing changes after this)."""
    if ctx.tracker is None:
        return []
    patched = [p for change in changes for p in (change.path, change.old_path) if p]
    return ctx.tracker.unattributed(patched)


def held_secrets(ctx: AttemptContext) -> dict[str, str]:
    """The passthrough secrets the agent's processes were given, by name: the agent held them.
    A patch or noop agent starts none; a script plan only through a shell call; the checks and
    the judge, which also get them, are agentctl's, not the agent's."""
    if not _agent_ran_a_process(ctx.spec.agent_spec):
        return {}
    return held({name: ctx.env[name] for name in ctx.spec.tool_policy.env_passthrough
                 if name in ctx.env})


# the tools of a script plan that start a process, which gets the passthrough environment
PROCESS_TOOLS = frozenset({"shell.run", "agent.exec"})


def _agent_ran_a_process(agent: AgentSpec) -> bool:
    if agent.kind in (AgentKind.PATCH, AgentKind.NOOP):
        return False
    if agent.kind is not AgentKind.SCRIPT:
        return True  # command and native agents run with the passthrough environment
    try:
        plan = load_plan(Path(agent.value), read_pinned(agent))
    except (BadInput, OSError):
        return True  # unreadable now: assume the worst
    return any(step.tool in PROCESS_TOOLS for step in plan)


def _redacted(changes: Sequence[FileChange], redactor: Redactor) -> tuple[FileChange, ...]:
    """The file changes as stored: a secret used as a file name is redacted (the boundary was
    judged on the real names; the diff artifact keeps them, INTERNAL_ONLY when it must)."""
    clean = redactor.clean
    return tuple(replace(change, path=clean(change.path),
                         old_path=clean(change.old_path) if change.old_path else None,
                         link_target=clean(change.link_target) if change.link_target else None)
                 for change in changes)
