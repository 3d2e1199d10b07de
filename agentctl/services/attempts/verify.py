"""VERIFYING: each planned command runs in the workspace; its log is evidence; the report sums up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agentctl.domain import ids
from agentctl.domain.enums import (
    ArtifactType,
    StepStatus,
    StepType,
    VerificationCheckStatus,
)
from agentctl.domain.errors import InfrastructureFailure
from agentctl.domain.findings import DiffLine
from agentctl.domain.patch import Patch
from agentctl.domain.spec import PlannedCheck
from agentctl.domain.test_side import SideRule
from agentctl.domain.verification import (
    TestReport,
    VerificationCheck,
    VerificationReport,
    overall_status,
)
from agentctl.execution.environment import verification_env
from agentctl.execution.verification.test_reports import ReportDir
from agentctl.execution.verification.verifier import CheckOutcome, run_check
from agentctl.execution.workspaces.workspace import checkout_patched
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.baseline import BaseBeside, CheckRun, compare_with_base
from agentctl.services.attempts.confinement import named_paths, record_connections
from agentctl.services.attempts.evidence import json_artifact, log_artifact, text_artifact
from agentctl.services.attempts.sides import (
    EvidenceTrees,
    evidence_trees,
    run_side_rule,
    side_runs,
)

_STEP_STATUS = {
    VerificationCheckStatus.PASSED: StepStatus.SUCCEEDED,
    VerificationCheckStatus.TIMED_OUT: StepStatus.TIMED_OUT,
    VerificationCheckStatus.SKIPPED: StepStatus.SKIPPED,
}  # FAILED, INFRA_FAILURE and CANCELLED checks are FAILED steps (with the status as their code)


@dataclass(frozen=True, slots=True)
class VerificationEvidence:
    report: VerificationReport
    evidence: tuple[str, ...]  # verifier-report.json first, then the logs and test reports
    side: SideRule  # the run's test-side rule, which the judge reads too


def verify(ctx: AttemptContext, patch: Patch, diff: Path, beside: BaseBeside | None = None,
           diff_lines: Sequence[DiffLine] = ()) -> VerificationEvidence | None:
    """The patch alone, applied to a fresh checkout of the base commit, then every planned
    check there, then the report; None when the run was stopped on the way. `beside`: the
    base's runs, started with the attempt (the caller closes it). Where the patch has a test
    side, its sides also run each beside the other's base (`evidence_trees`)."""
    started = ctx.ledger.now()
    _checkout(ctx, patch, diff)
    side = run_side_rule(ctx)
    trees = evidence_trees(ctx, patch, diff_lines, side)  # before any check runs in the tree
    compared = _checks_and_base(ctx, beside, trees)
    if compared is None or ctx.stop():
        return None
    _runs, checks, evidence = compared
    report_id = ids.new_id("verification")
    with ctx.step(StepType.SUMMARIZE_LOG, "verification report") as step:
        report = VerificationReport(
            verification_report_id=report_id, run_id=ctx.ledger.lease.run_id,
            attempt_id=ctx.ledger.lease.attempt_id, status=overall_status(checks),
            checks=tuple(checks), full_report_artifact=None, started_at=started,
            ended_at=ctx.ledger.now(),
        )
        document = json_artifact(ctx.ledger.blobs, report, name="verifier-report.json",
                                 type_=ArtifactType.VERIFIER_REPORT, redactor=ctx.redactor)
        step.add(document)
        report = replace(report, full_report_artifact=document.artifact_id)
        step.note(status=report.status.value, checks=len(checks))
        step.record(report)
    # a rerun whose log is the same as the first run's is the same artifact: cited once
    return VerificationEvidence(report, tuple(dict.fromkeys((document.artifact_id, *evidence))),
                                side)


def _checks_and_base(ctx: AttemptContext, beside: BaseBeside | None,
                     trees: EvidenceTrees | None,
                     ) -> tuple[list[CheckRun], list[VerificationCheck], list[str]] | None:
    """Every planned check on the patch, then the evidence runs of its sides, then each
    compared with the base; None if stopped."""
    runs: list[CheckRun] = []
    evidence: list[str] = []
    for planned in ctx.spec.verification_plan.checks:
        if ctx.stop():
            return None
        check, produced, tests = _run_one(ctx, planned)
        runs.append(CheckRun(planned, check, tests))
        evidence += produced
    if ctx.stop():
        return None
    sides = side_runs(ctx, runs, trees, evidence) if trees is not None else {}
    if sides is None:
        return None
    compared = compare_with_base(ctx, runs, beside, sides)
    if compared is None:
        return None
    checks, produced = compared
    return runs, checks, evidence + produced


def _checkout(ctx: AttemptContext, patch: Patch, diff: Path) -> None:
    """What the agent left behind is not what is verified: the patch is, on its base."""
    base = ctx.spec.base_commit
    with ctx.step(StepType.APPLY_PATCH, f"apply the patch to a fresh checkout of {base[:12]}",
                  live=True) as step:
        tree = checkout_patched(ctx.dirs, base, diff, should_stop=ctx.stop)
        step.note(path=str(ctx.dirs.verify), tree=tree)
        if tree != patch.tree_id:
            raise InfrastructureFailure(f"the patch applied to a fresh checkout gives tree "
                                        f"{tree[:12]}, not {str(patch.tree_id)[:12]}")


def _run_one(ctx: AttemptContext, planned: PlannedCheck,
             ) -> tuple[VerificationCheck, list[str], TestReport | None]:
    ctx.progress(f"verifying: {planned.command}")
    log = ctx.scratch / f"{planned.name}.log"
    with ctx.step(StepType.RUN_VERIFIER, planned.name, live=True) as step:
        step.note(command=planned.command, required=planned.required)
        reports = report_dir(ctx, planned.name)
        jail = ctx.sandbox.jail(ctx.dirs.verify, read_only=named_paths(
            planned.command, ctx.protected), writable=(reports.path,)) if ctx.sandbox else None
        outcome = run_check(
            planned, workspace=ctx.dirs.verify, env=verification_env(ctx.env), log_path=log,
            infra_patterns=ctx.spec.verification_plan.infra_patterns,
            should_stop=ctx.stop, reports=reports, confine=jail,
        )
        record_connections(ctx.ledger, jail, made_by=step.step.step_id, process=planned.command,
                           redactor=ctx.redactor)
        summary = ctx.redactor.clean(outcome.summarized_failure) if outcome.summarized_failure \
            else None
        log_draft = log_artifact(ctx.ledger.blobs, log, name=f"{planned.name}.log",
                                 type_=ArtifactType.COMMAND_LOG, redactor=ctx.redactor,
                                 redact_up_to=ctx.redact_logs_up_to,
                                 metadata={"command": ctx.redactor.clean(planned.command)})
        step.add(log_draft)
        report_draft = None
        if outcome.junit_report is not None and outcome.junit_report.is_file():
            report_draft = text_artifact(
                ctx.ledger.blobs, outcome.junit_report.read_text(errors="replace"),
                name=outcome.junit_report.name, type_=ArtifactType.TEST_REPORT,
                redactor=ctx.redactor)
            step.add(report_draft)
        if outcome.test_report is not None:  # the parsed one is what the check cites
            report_draft = json_artifact(
                ctx.ledger.blobs, outcome.test_report, name=f"{planned.name}.tests.json",
                type_=ArtifactType.TEST_REPORT, redactor=ctx.redactor)
            step.add(report_draft)
            step.note(tests=_counts(outcome))
        step.note(status=outcome.status.value, exitCode=outcome.exit_code,
                  durationSeconds=round(outcome.duration_seconds, 3), summary=summary)
        if outcome.status is not VerificationCheckStatus.PASSED:
            step.fail(outcome.status.value.lower(), summary or outcome.status.value,
                      _STEP_STATUS.get(outcome.status, StepStatus.FAILED))
        leftover = ctx.reap()
        if leftover:
            step.note(leftoverProcessesKilled=leftover)
    ctx.progress(f"check {planned.name}: {outcome.status.value} in "
                 f"{outcome.duration_seconds:.1f}s" + (f" ({summary})" if summary else ""))
    check = VerificationCheck(
        name=planned.name, command=planned.command, status=outcome.status,
        exit_code=outcome.exit_code, duration_seconds=round(outcome.duration_seconds, 3),
        log_artifact=log_draft.artifact_id, summarized_failure=summary, required=planned.required,
        test_report_artifact=report_draft.artifact_id if report_draft else None,
        failing_tests=tuple(ctx.redactor.clean(t) for t in outcome.failing_tests),
        tests_ran=outcome.tests_ran,
        tests=outcome.test_report.counts if outcome.test_report else None,
        runner=outcome.test_report.runner if outcome.test_report else None,
        failing_test_ids=tuple(ctx.redactor.clean(t.test_id)
                               for t in outcome.test_report.failing)
        if outcome.test_report else (),
    )
    produced = [a.artifact_id for a in step.artifacts]
    return check, produced, outcome.test_report


def report_dir(ctx: AttemptContext, name: str) -> ReportDir:
    """A check's private report directory: in the attempt's scratch, outside every checkout."""
    reports = ReportDir(ctx.scratch / "reports" / name)
    reports.path.mkdir(parents=True, exist_ok=True)  # bound into the check's sandbox
    return reports


def _counts(outcome: CheckOutcome) -> dict[str, int]:
    counts = outcome.test_report.counts if outcome.test_report else None
    return {} if counts is None else {"passed": counts.passed, "failed": counts.failed,
                                      "skipped": counts.skipped, "errors": counts.errors}
