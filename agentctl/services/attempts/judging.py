"""JUDGING: findings on the redacted diff against the task's intent and boundary."""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentctl.domain import ids
from agentctl.domain.enums import ArtifactType, JudgeStatus, Severity, StepType
from agentctl.domain.judge import (
    RULES_JUDGE,
    JudgeFinding,
    Judgement,
    JudgeReport,
    combine,
    judge_by_rules,
    status_for,
)
from agentctl.domain.serialize import to_json
from agentctl.domain.spec import ExecutionSpec
from agentctl.domain.test_side import SideRule
from agentctl.domain.verification import VerificationReport
from agentctl.execution.verification.external_judge import run_external_judge
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.collect import CollectedEvidence
from agentctl.services.attempts.confinement import named_paths, record_connections
from agentctl.services.attempts.evidence import json_artifact


@dataclass(frozen=True, slots=True)
class JudgeEvidence:
    report: JudgeReport
    evidence: tuple[str, ...]


def judge(ctx: AttemptContext, collected: CollectedEvidence, verification: VerificationReport,
          side: SideRule, agent_warnings: tuple[str, ...] = ()) -> JudgeEvidence:
    """The rules judge (and the configured one) on the patch; `side` is the run's test-side
    rule, the one its evidence was split by."""
    spec, patch = ctx.spec, collected.patch
    assert patch is not None, "only a patch is judged"
    command = spec.judge_policy.command
    with ctx.step(StepType.JUDGE_DIFF, "judge the diff", live=command is not None) as step:
        judgement = judge_by_rules(
            instruction=spec.instruction, changes=patch.file_changes,
            diff_lines=collected.diff_lines, boundary=patch.boundary_check,
            policy=spec.judge_policy, verification=verification, task_type=spec.task_type,
            side=side,
        )
        if collected.held_secrets:  # first: the verdict's reason names the secrets held
            judgement = combine(Judgement(
                status=status_for(collected.held_secrets), confidence=judgement.confidence,
                summary="the agent held secrets", findings=collected.held_secrets), judgement)
        if agent_warnings:  # how the agent ran, e.g. spend claims its gateway contradicts
            judgement = combine(judgement, Judgement(
                status=JudgeStatus.PASSED_WITH_WARNINGS, confidence=judgement.confidence,
                summary="the agent's own spend claims disagree with its model gateway",
                findings=tuple(JudgeFinding(severity=Severity.WARNING, category="model_spend",
                                            message=text) for text in agent_warnings)))
        name = RULES_JUDGE
        if command:
            ctx.progress(f"judge: {command}")
            place = ctx.dirs.root / "judge"
            place.mkdir(exist_ok=True)
            jail = ctx.sandbox.jail(place, read_only=named_paths(command, ctx.protected)) \
                if ctx.sandbox else None
            judgement = combine(judgement, run_external_judge(
                command, judge_case(spec, collected, verification), cwd=place,
                env=ctx.env, timeout=spec.judge_policy.timeout_seconds, should_stop=ctx.stop,
                confine=jail, scratch=ctx.dirs.scratch))
            record_connections(ctx.ledger, jail, made_by=step.step.step_id, process=command,
                               redactor=ctx.redactor)
            ctx.reap()
            name = f"{RULES_JUDGE} + command"
        report = JudgeReport(
            judge_report_id=ids.new_id("judge"), run_id=ctx.ledger.lease.run_id,
            attempt_id=ctx.ledger.lease.attempt_id, judge=name,
            status=judgement.status, findings=judgement.findings,
            confidence=judgement.confidence, report_artifact=None,
            created_at=ctx.ledger.now(), summary=judgement.summary,
        )
        document = json_artifact(ctx.ledger.blobs, report, name="judge-report.json",
                                 type_=ArtifactType.JUDGE_REPORT, redactor=ctx.redactor)
        report = replace(report, report_artifact=document.artifact_id)
        step.add(document)
        step.note(status=report.status.value, findings=len(report.findings),
                  confidence=report.confidence)

        step.record(report)
    return JudgeEvidence(report, (document.artifact_id,))


def judge_case(spec: ExecutionSpec, collected: CollectedEvidence,
               verification: VerificationReport) -> dict[str, object]:
    """What an external judge sees: intent, the diff only if it is SAFE_FOR_PR, the touched
    files, the boundary and a summary of verification. Never logs, never secrets."""
    patch = collected.patch
    assert patch is not None
    diff = collected.safe_diff.read_text(errors="replace") if collected.safe_diff else None
    return {
        "task": {"taskType": spec.task_type.value, "instruction": spec.instruction,
                 "autonomyLevel": spec.autonomy_level.value},
        "baseCommit": spec.base_commit,
        "diff": diff,
        "diffWithheld": None if diff is not None else "the patch contains secrets",
        "touchedFiles": to_json(patch.file_changes),
        "stats": to_json(patch.stats),
        "boundary": to_json(patch.boundary_check),
        "verification": {
            "status": verification.status.value,
            "checks": [{"name": c.name, "command": c.command, "status": c.status.value,
                        "required": c.required, "summarizedFailure": c.summarized_failure}
                       for c in verification.checks],
        },
        "schema": "print one JSON object: {status, confidence, findings: [{severity, category, "
                  "message, filePath?, lineNumber?, blocksAutoPr?}], summary?}",
    }
