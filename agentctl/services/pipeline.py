"""One attempt of a run, DESIGN.md §2 steps 4–9: workspace, agent, patch, verify, judge, verdict.

The attempt ends the run with a verdict, or, after an infrastructure failure with attempts left,
queues it again for a fresh attempt. A lost lease stops it silently: the run belongs to another
attempt now and nothing this one writes would be accepted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    EventType,
    RunStatus,
    StepType,
    VerdictStatus,
)
from agentctl.domain.errors import InfrastructureFailure, LeaseLost
from agentctl.domain.judge import JudgeReport
from agentctl.domain.redaction import Redactor
from agentctl.domain.run import Run
from agentctl.domain.serialize import to_json
from agentctl.domain.verdict import Decision, Evidence, VerdictInputs, decide_verdict
from agentctl.domain.verification import VerificationReport
from agentctl.execution import workspace as workspaces
from agentctl.execution.agents import AgentOutcome, AgentSession, build_agent
from agentctl.execution.agents.spec import AgentSpec
from agentctl.execution.environment import scrubbed_env, secret_values
from agentctl.execution.guards import BudgetGuard
from agentctl.execution.repository import is_url
from agentctl.execution.tools import ToolContext
from agentctl.services.attempt import AttemptContext, StopSignal
from agentctl.services.collect import CollectedEvidence, collect
from agentctl.services.evidence import json_artifact, text_artifact
from agentctl.services.judging import judge
from agentctl.services.recorder import AttemptRecorder, NewArtifact
from agentctl.services.runtime import Approver, ToolRuntime
from agentctl.services.summary import final_summary
from agentctl.services.verify import verify


@dataclass(frozen=True, slots=True)
class RunOptions:
    keep_workspace: bool = False
    approver: Approver | None = None
    progress: Callable[[str], None] = lambda _message: None
    redact_logs_up_to: int = 64 * 1024 * 1024
    # Ctrl-C/SIGTERM: an inline run ends CANCELLED; a worker releases the run to the queue.
    release_on_interrupt: bool = False


def execute_attempt(recorder: AttemptRecorder, run: Run, stop: StopSignal,
                    options: RunOptions) -> Run | None:
    """Run one attempt; the run as it stands afterwards, or None if the lease was lost."""
    spec = run.execution_spec
    policy = spec.tool_policy
    root = workspaces.create_workspace_dir()
    ctx = AttemptContext(
        recorder=recorder, spec=spec, workspace=root / "repo", scratch=root / "scratch",
        env=scrubbed_env(policy.env_allowlist, policy.env_passthrough),
        redactor=Redactor(literals=secret_values(policy.env_passthrough)),
        stop=stop, progress=options.progress, redact_logs_up_to=options.redact_logs_up_to,
    )
    ctx.scratch.mkdir()
    try:
        recorder.activate()
        return _pipeline(ctx, run, options)
    except LeaseLost:
        stop.lose_lease()
        return None
    finally:
        if options.keep_workspace:
            options.progress(f"workspace kept at {ctx.workspace}")
        else:
            workspaces.remove_workspace(root)


def _pipeline(ctx: AttemptContext, run: Run, options: RunOptions) -> Run:
    spec, recorder = ctx.spec, ctx.recorder
    failure = _prepare_workspace(ctx)
    if failure is not None:
        return failure
    recorder.advance(RunStatus.RUNNING_AGENT, EventType.WORKSPACE_PREPARED,
                     baseCommit=spec.base_commit, workspace=str(ctx.workspace))
    if ctx.stop.cancel_reason:
        return _cancelled(ctx)
    outcome = _run_agent(ctx, options)
    if ctx.stop.cancel_reason:
        return _cancelled(ctx)
    collected = collect(ctx)
    evidence = Evidence(patch=collected.evidence)
    verification = judgement = None
    if collected.patch is not None and outcome.error is None:
        recorder.advance(RunStatus.VERIFYING, EventType.VERIFIER_STARTED,
                         checks=[c.name for c in spec.verification_plan.checks])
        verified = verify(ctx)
        if ctx.stop.cancel_reason:
            return _cancelled(ctx)
        verification = verified.report
        recorder.advance(RunStatus.JUDGING, EventType.VERIFIER_COMPLETED,
                         verificationReportId=verification.verification_report_id,
                         status=verification.status.value,
                         failures=verification.failure_reasons())
        judged = judge(ctx, collected, verification)
        judgement = judged.report
        evidence = Evidence(patch=collected.evidence, verification=verified.evidence,
                            judge=judged.evidence)
    decision = decide_verdict(VerdictInputs(
        autonomy=spec.autonomy_level, judge_policy=spec.judge_policy, patch=collected.patch,
        verification=verification, judge=judgement, evidence=evidence,
        agent_error=outcome.error,
    ))
    if decision.status is VerdictStatus.FAILED_INFRASTRUCTURE:
        return recorder.fail(code="verifier_infra_failure", reason=decision.reasons[0],
                             final=_summarized(ctx, run, collected, verification, judgement,
                                               decision, outcome))
    return recorder.finish(_summarized(ctx, run, collected, verification, judgement, decision,
                                       outcome))


def _prepare_workspace(ctx: AttemptContext) -> Run | None:
    """PREPARE_WORKSPACE and CLONE_REPOSITORY; an infrastructure failure ends the attempt."""
    spec = ctx.spec
    with ctx.step(StepType.PREPARE_WORKSPACE, "create a private workspace") as step:
        step.note(path=str(ctx.workspace.parent))
    ctx.progress(f"cloning {spec.repository} at {spec.base_commit[:12]}")
    failure: str | None = None
    report: NewArtifact | None = None
    with ctx.step(StepType.CLONE_REPOSITORY, f"clone at {spec.base_commit[:12]}",
                  live=True) as step:
        step.note(repository=spec.repository, baseCommit=spec.base_commit)
        try:
            workspaces.clone_at(spec.repository, spec.base_commit, ctx.workspace,
                                is_url=is_url(spec.repository), should_stop=ctx.stop)
        except InfrastructureFailure as error:
            if ctx.stop():  # cancelled, or the lease was lost: not a fault of the clone
                step.fail("stopped", str(error))
            else:
                failure = f"clone failed: {ctx.redactor.clean(str(error))}"
                report = json_artifact(
                    ctx.recorder, {"phase": "clone", "error": failure,
                                   "repository": spec.repository,
                                   "baseCommit": spec.base_commit},
                    name="failure-report.json", type_=ArtifactType.FAILURE_REPORT,
                    redactor=ctx.redactor, visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER)
                step.add(report)
                step.fail("clone_failed", failure)
    if ctx.stop.lease_lost:
        raise LeaseLost("the lease was lost while cloning")
    if ctx.stop.cancel_reason:
        return _cancelled(ctx)
    if failure is None or report is None:
        return None
    decision = decide_verdict(VerdictInputs(
        autonomy=spec.autonomy_level, judge_policy=spec.judge_policy, patch=None,
        verification=None, judge=None, evidence=Evidence(failure=(report.artifact_id,)),
        infrastructure_failure=failure,
    ))
    return ctx.recorder.fail(code="clone_failed", reason=failure, final=decision)


def _run_agent(ctx: AttemptContext, options: RunOptions) -> AgentOutcome:
    spec = ctx.spec
    agent_spec = _agent_spec(spec.agent, spec.agent_digest)
    ctx.progress(f"agent: {spec.agent}")
    task_file = ctx.scratch / "task.json"
    with ctx.step(StepType.LOAD_CONTEXT, "task and spec for the agent") as step:
        task_file.write_text(json.dumps({"instruction": spec.instruction,
                                         "executionSpec": to_json(spec)}, indent=2))
        step.note(taskFile=str(task_file), agent=spec.agent)
    tool_context = ToolContext(
        workspace=ctx.workspace, policy=spec.tool_policy, boundary=spec.patch_boundary,
        env=ctx.env, redactor=ctx.redactor, scratch=ctx.scratch, should_stop=ctx.stop,
    )
    runtime = ToolRuntime(ctx.recorder, tool_context, BudgetGuard(spec.budget),
                          approver=options.approver, agent_timeout=spec.budget.wall_seconds,
                          redact_logs_up_to=ctx.redact_logs_up_to)
    session = AgentSession(
        instruction=spec.instruction, workspace=ctx.workspace, task_file=task_file,
        tools=runtime, step=ctx.step, should_stop=ctx.stop, env=ctx.env,
    )
    return build_agent(agent_spec).run(session)


def _agent_spec(described: str, digest: str | None) -> AgentSpec:
    kind, _, value = described.partition(":")
    return AgentSpec(kind, value, digest)


def _summarized(ctx: AttemptContext, run: Run, collected: CollectedEvidence,
                verification: VerificationReport | None, judgement: JudgeReport | None,
                decision: Decision, outcome: AgentOutcome) -> Decision:
    """FINALIZE: write final-summary.md; the verdict cites it as its first evidence."""
    text = final_summary(run_id=run.run_id, run_number=run.number, spec=ctx.spec,
                         patch=collected.patch, verification=verification, judge=judgement,
                         decision=decision, agent_error=outcome.error)
    with ctx.step(StepType.FINALIZE, "final summary") as step:
        summary = text_artifact(ctx.recorder, text, name="final-summary.md",
                                type_=ArtifactType.PATCH_SUMMARY, redactor=ctx.redactor)
        step.add(summary)
    return replace(decision, evidence=(summary.artifact_id, *decision.evidence))


def _cancelled(ctx: AttemptContext) -> Run:
    spec = ctx.spec
    decision = decide_verdict(VerdictInputs(
        autonomy=spec.autonomy_level, judge_policy=spec.judge_policy, patch=None,
        verification=None, judge=None, evidence=Evidence(), cancelled=ctx.stop.cancel_reason,
    ))
    return ctx.recorder.finish(decision)

