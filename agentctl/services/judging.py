"""JUDGING: findings on the redacted diff against the task's intent and boundary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentctl.domain import ids
from agentctl.domain.artifact import Artifact
from agentctl.domain.enums import ArtifactType, EventType, StepType
from agentctl.domain.events import NewEvent
from agentctl.domain.judge import RULES_JUDGE, DiffLine, JudgeReport, judge_by_rules
from agentctl.domain.patch import Patch
from agentctl.services.attempt import AttemptContext
from agentctl.services.evidence import json_artifact
from agentctl.store.uow import UnitOfWork


@dataclass(frozen=True, slots=True)
class JudgeEvidence:
    report: JudgeReport
    evidence: tuple[str, ...]


def judge(ctx: AttemptContext, patch: Patch, diff_lines: Sequence[DiffLine]) -> JudgeEvidence:
    spec = ctx.spec
    with ctx.step(StepType.JUDGE_DIFF, "judge the diff") as step:
        judgement = judge_by_rules(
            instruction=spec.instruction, changes=patch.file_changes, diff_lines=diff_lines,
            boundary=patch.boundary_check, policy=spec.judge_policy,
        )
        report = JudgeReport(
            judge_report_id=ids.new_id("judge"), run_id=ctx.recorder.lease.run_id,
            attempt_id=ctx.recorder.lease.attempt_id, judge=RULES_JUDGE,
            status=judgement.status, findings=judgement.findings,
            confidence=judgement.confidence, report_artifact=None,
            created_at=ctx.recorder.clock(), summary=judgement.summary,
        )
        document = json_artifact(ctx.recorder, report, name="judge-report.json",
                                 type_=ArtifactType.JUDGE_REPORT, redactor=ctx.redactor)
        report = replace(report, report_artifact=document.artifact_id)
        step.add(document)
        step.note(status=report.status.value, findings=len(report.findings),
                  confidence=report.confidence)

        def add_report(uow: UnitOfWork, _: list[Artifact]) -> None:
            uow.judgements.add(report)
            uow.events.append(NewEvent(
                type=EventType.JUDGE_COMPLETED, created_at=report.created_at,
                task_id=ctx.recorder.lease.task_id, run_id=report.run_id,
                attempt_id=report.attempt_id, step_id=step.step.step_id,
                payload={"judgeReportId": report.judge_report_id, "judge": report.judge,
                         "status": report.status.value, "confidence": report.confidence,
                         "findings": len(report.findings)},
            ))

        step.also = add_report
    return JudgeEvidence(report, (document.artifact_id,))
