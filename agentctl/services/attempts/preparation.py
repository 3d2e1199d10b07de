"""The attempt's first two steps, DESIGN.md §2 step 4: the sandbox its processes run in, and
the workspace at the base commit; then what the redactor must know from the base's secret
files. Each returns the attempt's end where it cannot go on, else None."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from agentctl.domain.ending import AttemptEnd, InfraFailed
from agentctl.domain.enums import ArtifactType, ArtifactVisibility, StepType
from agentctl.domain.errors import InfrastructureFailure
from agentctl.domain.globs import matching_paths
from agentctl.domain.spec import ExecutionSpec
from agentctl.domain.verdict import Evidence, infrastructure_failed
from agentctl.execution.environment import secret_file_values
from agentctl.execution.sandboxing.sandbox import Sandbox
from agentctl.execution.work_tree import is_url
from agentctl.execution.workspaces import workspace as workspaces
from agentctl.home import resolve_home
from agentctl.services.attempts.attempt import AttemptContext, StepRecord
from agentctl.services.attempts.evidence import json_artifact


def protected_paths(spec: ExecutionSpec, attempt_root: Path,
                    extra: tuple[Path, ...]) -> tuple[Path, ...]:
    """What no process of the run may see: the attempt's own directory (agentctl's git, the
    logs), the state home, and the repository the workspace was cloned from."""
    homes = [Path(os.environ["AGENTCTL_HOME"])] if os.environ.get("AGENTCTL_HOME") else []
    if not homes and not extra:
        homes.append(resolve_home(None).root)
    paths = [attempt_root, *extra, *homes]
    if not is_url(spec.repository) and spec.repository:
        paths.append(Path(spec.repository))
    return tuple(dict.fromkeys(Path(os.path.abspath(p)) for p in paths))


def _prepare_sandbox(ctx: AttemptContext, step: StepRecord) -> AttemptEnd | None:
    """The attempt's sandbox (its proxy, what it hides, the toolchains it binds back), noted on
    the step; a machine where it cannot start ends the attempt as an infrastructure failure."""
    profile = ctx.spec.sandbox
    if not profile.enabled:
        ctx.progress("WARNING: the sandbox is OFF for this run: its processes run with your "
                     "permissions")
        step.note(sandbox="off")
        return None
    net = ctx.dirs.root / "net"
    net.mkdir(exist_ok=True)
    try:
        ctx.sandbox = Sandbox.for_attempt(profile, env=ctx.env, hidden=ctx.protected,
                                          proxy_dir=net)
    except OSError as error:
        reason = ctx.redactor.clean(str(error))
        step.fail("sandbox_unavailable", reason)
        return InfraFailed(code="sandbox_unavailable", reason=reason,
                           final=infrastructure_failed(reason, ctx.spec.autonomy_level,
                                                       Evidence()))
    step.note(sandbox=ctx.sandbox.describe())
    return None


def prepare_workspace(ctx: AttemptContext,
                       cloned: Callable[[], None] = lambda: None) -> AttemptEnd | None:
    """PREPARE_WORKSPACE and CLONE_REPOSITORY; a clone that fails ends the attempt.
    `cloned` is called as soon as the workspace is there, before its step is written."""
    spec = ctx.spec
    with ctx.step(StepType.PREPARE_WORKSPACE, "create a private workspace") as step:
        step.note(path=str(ctx.workspace.parent))
        failed = _prepare_sandbox(ctx, step)
    if failed is not None:
        return failed
    ctx.progress(f"cloning {spec.repository} at {spec.base_commit[:12]}")
    with ctx.step(StepType.CLONE_REPOSITORY, f"clone at {spec.base_commit[:12]}",
                  live=True) as step:
        step.note(repository=spec.repository, baseCommit=spec.base_commit)
        try:
            workspaces.clone_at(spec.repository, spec.base_commit, ctx.dirs,
                                is_url=is_url(spec.repository), should_stop=ctx.stop,
                                cache=ctx.tree_cache)
        except InfrastructureFailure as error:
            if ctx.stop():  # cancelled, or the lease was lost: not a fault of the clone
                step.fail("stopped", str(error))
                return ctx.stop.ending()
            failure = f"clone failed: {ctx.redactor.clean(str(error))}"
            report = json_artifact(
                ctx.ledger.blobs, {"phase": "clone", "error": failure,
                                   "repository": spec.repository, "baseCommit": spec.base_commit},
                name="failure-report.json", type_=ArtifactType.FAILURE_REPORT,
                redactor=ctx.redactor, visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER)
            step.add(report)
            step.fail("clone_failed", failure)
            ctx.progress(failure)
            return InfraFailed(code="clone_failed", reason=failure, final=infrastructure_failed(
                failure, spec.autonomy_level, Evidence(failure=(report.artifact_id,))))
        step.note(treeView=workspaces.uses_views(ctx.dirs))  # a view of the tree cache
        cloned()
    ctx.redactor = ctx.redactor.knowing(secret_file_values(_secret_files(ctx)))
    return None


def _secret_files(ctx: AttemptContext) -> list[Path]:
    """The base's tracked files that match the secret-file globs (`.env`, `*.pem`...)."""
    listed = workspaces.tracked_files(ctx.dirs, ctx.stop)
    return [ctx.workspace / name for name in matching_paths(ctx.spec.tool_policy.secret_files,
                                                            listed)]
