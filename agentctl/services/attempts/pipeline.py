"""One attempt of a run, DESIGN.md §2 steps 4–9: workspace, agent, patch, verify, judge, verdict.

Each phase returns what it produced; the attempt's ledger is the one writer. The attempt ends
in exactly one `AttemptEnd` (a verdict, a cancellation, an infrastructure failure that may earn
a fresh attempt, or a lost lease that writes nothing), handed to `ledger.end`.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentctl.domain.agent import AgentKind
from agentctl.domain.audit import digest
from agentctl.domain.baseline import FIX_TASKS
from agentctl.domain.cassette import Cassette
from agentctl.domain.ending import AttemptEnd, Cancelled, Completed, InfraFailed, LostLease
from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    EventType,
    PatchApplyStatus,
    RunStatus,
    StepStatus,
    StepType,
    VerdictStatus,
)
from agentctl.domain.errors import InfrastructureFailure, LeaseLost, ModelUnreachable
from agentctl.domain.redaction import Redactor
from agentctl.domain.run import Run
from agentctl.domain.sandbox import sandbox_reason
from agentctl.domain.serialize import to_json
from agentctl.domain.verdict import (
    Decision,
    Evidence,
    VerdictInputs,
    decide_verdict,
    infrastructure_failed,
)
from agentctl.domain.verdict_types import Intent
from agentctl.execution.agents import AgentOutcome, AgentSession, build_agent
from agentctl.execution.agents.attribution import ChangeTracker
from agentctl.execution.agents.guards import BudgetGuard
from agentctl.execution.agents.tool_context import ToolContext
from agentctl.execution.environment import (
    RUN_DEFAULTS,
    scrubbed_env,
    secret_values,
)
from agentctl.execution.gateway.keys import without_keys
from agentctl.execution.git import agent_git_env, copy_index
from agentctl.execution.reaper import become_subreaper, descendants
from agentctl.execution.workspaces import workspace as workspaces
from agentctl.execution.workspaces.discard import discard_workspace
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.services.attempts.attempt import AttemptContext, Progress, StopSignal
from agentctl.services.attempts.baseline import BaseBeside
from agentctl.services.attempts.bugs import bug_text, is_bug
from agentctl.services.attempts.collect import CollectedEvidence, collect
from agentctl.services.attempts.evidence import json_artifact, text_artifact
from agentctl.services.attempts.judging import JudgeEvidence, judge
from agentctl.services.attempts.preparation import prepare_workspace, protected_paths
from agentctl.services.attempts.runtime import ToolRuntime
from agentctl.services.attempts.summary import final_summary
from agentctl.services.attempts.verify import VerificationEvidence, verify
from agentctl.services.ports import Approver, AttemptLedger, RunObserver, StepDone

if TYPE_CHECKING:
    from agentctl.services.attempts.gateway_agents import ThroughGateway

ARTIFACT_OUTAGE_SECONDS = 60.0  # `[store] artifact_outage_seconds`'s default


@dataclass(frozen=True, slots=True)
class RunOptions:
    keep_workspace: bool = False
    approver: Approver | None = None
    progress: Progress = lambda _message: None
    redact_logs_up_to: int = 64 * 1024 * 1024
    # Ctrl-C/SIGTERM: an inline run ends CANCELLED; a worker releases the run to the queue.
    release_on_interrupt: bool = False
    baseline_cache: Path | None = None  # the state home's baselines; None: none kept
    tree_cache: TreeCache | None = None  # the state home's checked-out bases; None: none kept
    # Hidden from the run's processes besides the defaults: the state home agentctl writes to.
    protected: tuple[Path, ...] = ()
    # Where the run's trace goes ([telemetry]): claude/codex get the trace context to nest under.
    trace_endpoint: str | None = None
    # [store] artifact_outage_seconds: how long an artifact store that cannot be written holds
    # the attempt before it is an infrastructure failure
    artifact_outage_seconds: float = ARTIFACT_OUTAGE_SECONDS
    observer: RunObserver | None = None  # told when each attempt starts and each step ends
    cassette: Cassette | None = None  # a replay: the native agent's model answers from it
    # Where a replay's cassette comes from, by the run it replays (each attempt a fresh one);
    # without it, a replay's model answers nothing: it never reaches the network.
    cassettes: Callable[[str], Cassette] | None = None
    # [verification] baseline_concurrent: the base's checks beside the candidate's (2+ cores)
    concurrent_baseline: bool = True


def execute_attempt(ledger: AttemptLedger, run: Run, stop: StopSignal,
                    options: RunOptions) -> Run | None:
    """Run one attempt to its end; the run as it stands afterwards, None if the lease was lost."""
    spec = run.execution_spec
    policy = spec.tool_policy
    become_subreaper()  # so that a process the attempt starts cannot leave agentctl's tree
    dirs = workspaces.create_attempt_dirs()
    env = scrubbed_env(policy.env_allowlist, policy.env_passthrough)
    if spec.agent_settings is not None or spec.command_gateway is not None:
        env = without_keys(env, spec.agent_settings)  # its model gateway holds the key
    ctx = AttemptContext(
        ledger=ledger, spec=spec, dirs=dirs, env={**RUN_DEFAULTS, **env},
        redactor=Redactor().knowing(secret_values(policy.env_passthrough)),
        stop=stop, progress=options.progress, redact_logs_up_to=options.redact_logs_up_to,
        approver=options.approver, spared=frozenset(descendants()),
        baseline_cache=options.baseline_cache, tree_cache=options.tree_cache,
        protected=protected_paths(spec, dirs.root, options.protected),
        state_home=options.protected[0] if options.protected else None,
        trace_endpoint=options.trace_endpoint,
        observer=options.observer, cassette=options.cassette,
        concurrent_baseline=options.concurrent_baseline and (os.cpu_count() or 1) >= 2,
    )
    try:
        ledger.activate(str(dirs.root))
        end = _attempt(ctx, run)
    except LeaseLost as lost:
        end = LostLease(str(lost))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: end the attempt on record, then stop
        ctx.reap()
        ledger.end(_interrupted(options))
        raise
    except Exception as error:  # noqa: BLE001 - a fault ends the attempt, never the worker
        end = _faulted(ctx, error)
    finally:
        ctx.reap()
        if ctx.sandbox is not None:
            ctx.sandbox.close()
        if options.keep_workspace:
            options.progress(f"workspace kept at {ctx.workspace}")
        else:  # gone from its path now, deleted in the background
            discard_workspace(dirs.root)
    return ledger.end(end)


def _attempt(ctx: AttemptContext, run: Run) -> AttemptEnd:
    spec, ledger = ctx.spec, ctx.ledger
    beside: BaseBeside | None = None

    def start_beside() -> None:
        """The base's runs beside the agent and the patch's checks, started as soon as the
        base is there: its first check is the start of the longest chain (its reruns wait for
        it), so the step's record, the secret files' listing and the workspace's event are
        written while it runs, not before (it records nothing itself)."""
        nonlocal beside
        if ctx.stop():
            return
        try:
            beside = BaseBeside.start(ctx)
        except (InfrastructureFailure, OSError):
            # its networks could not be made, which is not the clone's fault: the sequential
            # path runs the base after the patch's checks, and says why if it cannot (a bug
            # still surfaces)
            pass

    try:
        failed = prepare_workspace(ctx, cloned=start_beside)
        if failed is not None:
            return failed
        ledger.advance(RunStatus.RUNNING_AGENT, EventType.WORKSPACE_PREPARED,
                       baseCommit=spec.base_commit, workspace=str(ctx.workspace))
        if stopped := ctx.stop.ending():
            return stopped
        return _agent_and_evidence(ctx, run, beside)
    finally:
        if beside is not None:  # nothing of it runs on once the attempt ends
            beside.close()
            beside.checkout.release()


def _agent_and_evidence(ctx: AttemptContext, run: Run, beside: BaseBeside | None,
                        ) -> AttemptEnd:
    """The agent's turn, then the evidence of what it left (`beside`: the base's runs)."""
    spec = ctx.spec
    started = time.monotonic()
    try:
        outcome = _run_agent(ctx)
    except ModelUnreachable as unreachable:  # the vendor's fault: a new attempt may reach it
        return _phase_failed(ctx, "agent", unreachable)
    if ctx.cassette is not None:
        _record_played(ctx, ctx.cassette)
    if ctx.observer is not None:  # the agent's whole turn, as one line for a person watching
        ctx.observer.step_done(StepDone(
            StepType.MODEL_PLANNING, spec.agent,
            StepStatus.FAILED if outcome.error else StepStatus.SUCCEEDED,
            time.monotonic() - started, outcome.error))
    if stopped := ctx.stop.ending():
        return stopped
    if outcome.infrastructure is not None:  # its guard did not load, or missed a change:
        reason = ctx.redactor.clean(outcome.infrastructure)  # nothing of it is judged, and
        ctx.progress(reason)  # another attempt would launch it the same way
        return InfraFailed(code="agent_unguarded", reason=reason, retry=False,
                           final=infrastructure_failed(reason, spec.autonomy_level))
    try:
        return _judge_the_evidence(ctx, run, outcome, beside)
    except PhaseBroke as broke:  # whatever broke, the run ends on record, naming the phase
        return _phase_failed(ctx, broke.phase, broke.error)


def _record_played(ctx: AttemptContext, cassette: Cassette) -> None:
    """What a replay's attempt made of its cassette, on record for its report (`run replay`,
    `run show` of the replay), wherever it ran."""
    with ctx.step(StepType.SUMMARIZE_LOG, "model answers from the record") as step:
        step.note(requestsRecorded=len(cassette.recordings), requestsReplayed=cassette.used)
        step.add(json_artifact(
            ctx.ledger.blobs, {"recorded": len(cassette.recordings), "replayed": cassette.used,
                               "problem": cassette.problem}, name="replay-cassette.json",
            type_=ArtifactType.MODEL_TRANSCRIPT_SUMMARY, redactor=ctx.redactor,
            visibility=ArtifactVisibility.INTERNAL_ONLY))


def _faulted(ctx: AttemptContext, error: Exception) -> AttemptEnd:
    """The end of an attempt that broke outside its evidence phases (the disk filled, the
    artifact store went read-only): on record with a failure report when the store takes one,
    else without it; when nothing can be written, `ledger.end` raises and the lease expires."""
    try:
        return _phase_failed(ctx, "attempt", error)
    except LeaseLost as lost:
        return LostLease(str(lost))
    except Exception:  # noqa: BLE001 - the report cannot be stored either: end without it
        bug = is_bug(error)
        reason = ctx.redactor.clean(bug_text(error, "the attempt")) if bug else \
            f"attempt failed: {ctx.redactor.clean(str(error)) or type(error).__name__}"
        ctx.progress(reason)
        return InfraFailed(code="agentctl_bug" if bug else "attempt_failed", reason=reason,
                           final=infrastructure_failed(reason, ctx.spec.autonomy_level),
                           retry=not bug)


class PhaseBroke(Exception):
    """An evidence phase broke: which one, and what broke it (for the failure report)."""

    def __init__(self, phase: str, error: Exception) -> None:
        super().__init__(phase, error)
        self.phase, self.error = phase, error


@contextmanager
def _phase(name: str) -> Iterator[None]:
    """Whatever breaks in here (but a lost lease or a stop) is this phase's failure."""
    try:
        yield
    except (LeaseLost, PhaseBroke):
        raise
    except Exception as error:  # noqa: BLE001 - named, then ended on record by the caller
        raise PhaseBroke(name, error) from error


def _judge_the_evidence(ctx: AttemptContext, run: Run, outcome: AgentOutcome,
                        beside: BaseBeside | None = None) -> AttemptEnd:
    """COLLECT, VERIFY (the patch alone, on a fresh checkout), JUDGE, and the verdict."""
    spec, ledger = ctx.spec, ctx.ledger
    with _phase("collect"):
        collected = collect(ctx)
    patch = collected.patch
    verified: VerificationEvidence | None = None
    judged: JudgeEvidence | None = None
    applies = patch is not None and patch.apply_status is PatchApplyStatus.APPLIES_CLEANLY
    if patch is not None and collected.diff is not None and applies and outcome.error is None:
        with _phase("verify"):
            ledger.advance(RunStatus.VERIFYING, EventType.VERIFIER_STARTED,
                           checks=[c.name for c in spec.verification_plan.checks])
            verified = verify(ctx, patch, collected.diff, beside, collected.diff_lines)
            if verified is None:
                return ctx.stop.ending() or LostLease("stopped while verifying")
            report = verified.report
            ledger.advance(RunStatus.JUDGING, EventType.VERIFIER_COMPLETED,
                           verificationReportId=report.verification_report_id,
                           status=report.status.value, failures=report.failure_reasons(),
                           verificationDigest=digest(report))
        with _phase("judge"):
            ctx.progress("judging the diff")
            judged = judge(ctx, collected, report, verified.side, outcome.warnings)
    with _phase("decide"):
        return _decided(ctx, run, collected, verified, judged, outcome)


def _decided(ctx: AttemptContext, run: Run, collected: CollectedEvidence,
             verified: VerificationEvidence | None, judged: JudgeEvidence | None,
             outcome: AgentOutcome) -> AttemptEnd:
    """The verdict on the evidence, summarized."""
    spec, patch = ctx.spec, collected.patch
    decision = _summarized(ctx, run, collected, verified, judged, outcome, decide_verdict(
        VerdictInputs(
            sandbox_off=sandbox_reason(spec.sandbox),
            autonomy=spec.autonomy_level, judge_policy=spec.judge_policy, patch=patch,
            verification=verified.report if verified else None,
            judge=judged.report if judged else None, agent_error=outcome.error,
            allow_preexisting_failures=spec.verification_plan.allow_preexisting_failures,
            intent=Intent(fix=spec.task_type in FIX_TASKS,
                          must_pass=spec.verification_plan.must_pass,
                          allow_removed_tests=spec.verification_plan.allow_removed_tests),
            unattributed=collected.unattributed,
            evidence=Evidence(patch=collected.evidence,
                              verification=verified.evidence if verified else (),
                              judge=judged.evidence if judged else ()),
        )))
    decision = decision.redacted(ctx.redactor.clean)
    if decision.status is VerdictStatus.FAILED_INFRASTRUCTURE:
        return InfraFailed(code="verifier_infra_failure", reason=decision.reasons[0],
                           final=decision)
    return Completed(decision)


def _phase_failed(ctx: AttemptContext, phase: str, error: Exception) -> AttemptEnd:
    """A phase broke (git failed, the disk filled, a bug): a FAILURE_REPORT, and an end that
    retries while attempts remain, else FAILED_INFRASTRUCTURE citing the report; a bug of
    agentctl's ends the run at once, in its own words."""
    if stopped := ctx.stop.ending():
        return stopped
    bug = is_bug(error)
    reason = ctx.redactor.clean(bug_text(error, f"the {phase} phase")) if bug else \
        f"{phase} failed: {ctx.redactor.clean(str(error)) or type(error).__name__}"
    ctx.progress(reason)
    with ctx.step(StepType.FINALIZE, f"{phase} failed") as step:
        report = json_artifact(
            ctx.ledger.blobs, {"phase": phase, "error": reason, "type": type(error).__name__,
                               "trace": traceback.format_exception(error)[-6:]},
            name="failure-report.json", type_=ArtifactType.FAILURE_REPORT,
            redactor=ctx.redactor, visibility=ArtifactVisibility.INTERNAL_ONLY)
        step.add(report)
        step.fail(f"{phase}_failed", reason)
    final = infrastructure_failed(reason, ctx.spec.autonomy_level,
                                  Evidence(failure=(report.artifact_id,)))
    if bug:
        return InfraFailed(code="agentctl_bug", reason=reason, final=final, retry=False)
    return InfraFailed(code=f"{phase}_failed", reason=reason, final=final)


def _interrupted(options: RunOptions) -> AttemptEnd:
    """An inline run ends CANCELLED at once; a worker hands its run back to the queue (an
    infrastructure failure of this attempt) instead of making it wait for the lease to expire."""
    if options.release_on_interrupt:
        return InfraFailed(code="worker_stopped", reason="worker stopped")
    return Cancelled(by="the user", reason="interrupted (Ctrl-C or SIGTERM)")


def _run_agent(ctx: AttemptContext) -> AgentOutcome:
    spec = ctx.spec
    ctx.progress(f"agent: {spec.agent}")
    task_file = ctx.scratch / "task.json"
    with ctx.step(StepType.LOAD_CONTEXT, "task and spec for the agent") as step:
        task_file.write_text(json.dumps({"instruction": spec.instruction,
                                         "executionSpec": to_json(spec)}, indent=2))
        step.note(taskFile=str(task_file), agent=spec.agent)
    budget = BudgetGuard(spec.budget)
    tool_context = ToolContext(
        workspace=ctx.workspace, policy=spec.tool_policy, boundary=spec.patch_boundary,
        env={**ctx.env, **agent_git_env()}, redactor=ctx.redactor, scratch=ctx.scratch,
        git=ctx.dirs.git, should_stop=ctx.stop, budget=budget,
    )
    gateway: ThroughGateway | None = None
    if spec.agent_settings is not None or spec.command_gateway is not None:
        # claude, codex or a command given a gateway: the gateway's server, for these only
        from agentctl.services.attempts.gateway_agents import ThroughGateway

        gateway = ThroughGateway(ctx, budget)
        prepared = gateway.prepare(tool_context)
        if isinstance(prepared, AgentOutcome):
            return prepared
        tool_context = prepared
    ctx.tracker = ChangeTracker(ctx.dirs.git, _own_copy(ctx.dirs.index), ctx.scratch)
    runtime = ToolRuntime(ctx.ledger, tool_context, budget, base_index=ctx.dirs.index,
                          approver=ctx.approver, redact_logs_up_to=ctx.redact_logs_up_to,
                          sandbox=ctx.sandbox, agent_home=ctx.dirs.root / "agent-home",
                          task_file=task_file, protected=ctx.protected,
                          plan_is_trusted=spec.agent_spec.kind is AgentKind.SCRIPT,
                          tracker=ctx.tracker,
                          reap_since=ctx.reap_since
                          if spec.agent_spec.kind is AgentKind.SCRIPT else None)
    session = AgentSession(
        instruction=spec.instruction, workspace=ctx.workspace, task_file=task_file,
        tools=runtime, step=ctx.step, should_stop=ctx.stop, env=tool_context.env,
    )
    if gateway is None:
        return build_agent(spec.agent_spec).run(session)
    return gateway.run(runtime, session)


def _summarized(ctx: AttemptContext, run: Run, collected: CollectedEvidence,
                verified: VerificationEvidence | None, judged: JudgeEvidence | None,
                outcome: AgentOutcome, decision: Decision) -> Decision:
    """FINALIZE: write final-summary.md; the verdict cites it as its first evidence."""
    text = final_summary(run_id=run.run_id, run_number=run.number, spec=ctx.spec,
                         spec_digest=run.spec_digest, patch=collected.patch,
                         verification=verified.report if verified else None,
                         judge=judged.report if judged else None, decision=decision,
                         agent_error=outcome.error)
    with ctx.step(StepType.FINALIZE, "final summary") as step:
        summary = text_artifact(ctx.ledger.blobs, text, name="final-summary.md",
                                type_=ArtifactType.PATCH_SUMMARY, redactor=ctx.redactor)
        step.add(summary)
    return replace(decision, evidence=(summary.artifact_id, *decision.evidence))


def _own_copy(index: Path) -> Path:
    """Attribution snapshots in an index of their own: the checkout's index (and its stat
    cache) stays as the clone left it, for the patch collector alone."""
    copy = index.with_name("attribution.index")
    copy_index(index, copy)
    return copy
