"""Record factories for the domain unit tests (no IO); a Hypothesis profile that writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import settings

from agentctl.domain.artifact import Artifact
from agentctl.domain.enums import (
    ApprovalDecision,
    ArtifactType,
    ArtifactVisibility,
    AttemptStatus,
    AutonomyLevel,
    ChangeType,
    EventType,
    JudgeStatus,
    MessageRole,
    PatchApplyStatus,
    PrEligibility,
    RedactionStatus,
    RunStatus,
    SessionStatus,
    Severity,
    StepStatus,
    StepType,
    TaskSource,
    TaskStatus,
    TaskType,
    ToolDecision,
    VerdictStatus,
    VerificationCheckStatus,
    VerificationStatus,
)
from agentctl.domain.events import Event
from agentctl.domain.judge import JudgeFinding, JudgeReport
from agentctl.domain.patch import FileChange, Patch, PatchBoundaryCheck, PatchStats
from agentctl.domain.run import Attempt, Run
from agentctl.domain.spec import (
    Budget,
    CommandRules,
    ExecutionSpec,
    JudgePolicy,
    PatchBoundary,
    PlannedCheck,
    ToolPolicy,
    VerificationPlan,
)
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.domain.verdict import Approval, ChainLink, Verdict
from agentctl.domain.verification import VerificationCheck, VerificationReport

# No example database (it would leave a .hypothesis folder in the work tree) and no deadline
# (a loaded CI machine must not turn a slow example into a failure).
settings.register_profile("agentctl", database=None, deadline=None)
settings.load_profile("agentctl")

T0 = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
T1 = T0 + timedelta(minutes=3)
SHA = "ab" * 32
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def build_task(**overrides: object) -> Task:
    fields: dict[str, object] = dict(
        task_id="task_01JZ9T0000000000000000000A", source=TaskSource.CLI, created_by="alice",
        task_type=TaskType.DEPENDENCY_UPGRADE, title="Upgrade Jackson",
        instruction="Upgrade Jackson to 2.17.x and fix compile/test failures.",
        repository="/srv/payments-service", base_ref="main",
        autonomy_level=AutonomyLevel.SUPERVISED_PR, status=TaskStatus.DRAFT, created_at=T0,
        updated_at=T0, labels={"team": "payments"},
    )
    fields.update(overrides)
    return Task(**fields)  # type: ignore[arg-type]


@pytest.fixture
def make_task() -> Callable[..., Task]:
    """`make_task(status=..., repository=None, ...)`: a valid task with the seed's values."""
    return build_task


def in_status(task: Task, status: TaskStatus, reason: str | None = None) -> Task:
    """The task stored in `status` directly, as a row read back from the store would be."""
    return replace(task, status=status, status_reason=reason)


@pytest.fixture
def task_in() -> Callable[..., Task]:
    """`task_in(TaskStatus.CANCELLED, "reason", repository=None)`: a sample task in a status."""
    return lambda status, reason=None, **kw: in_status(build_task(**kw), status, reason)


# --- one sample of every record of the model, nested records filled in ----------------------


def sample_task() -> Task:
    return Task(
        task_id="task_01JZ9T0000000000000000000A", source=TaskSource.FILE, created_by="user_123",
        task_type=TaskType.DEPENDENCY_UPGRADE,
        title="Upgrade Jackson to 2.17.x in payments-service",
        instruction="Upgrade Jackson from 2.15.x to 2.17.x and fix compile/test failures.",
        repository="/srv/payments-service", base_ref="main",
        autonomy_level=AutonomyLevel.SUPERVISED_PR, status=TaskStatus.POLICY_DENIED,
        created_at=T0, updated_at=T1, labels={"team": "payments", "ticket": "PAY-1"},
        allowed_paths=("pom.xml", "src/**"), forbidden_paths=("infra/**",),
        verification_commands=("mvn -q verify",), session_id="session_01JZ9T000000000000000000AB",
        status_reason="autonomy auto_pr exceeds max_autonomy supervised_pr",
    )


def sample_spec() -> ExecutionSpec:
    return ExecutionSpec(
        repository="/srv/payments-service", base_ref="main", base_commit=COMMIT,
        task_type=TaskType.DEPENDENCY_UPGRADE, instruction="Upgrade Jackson",
        autonomy_level=AutonomyLevel.SUPERVISED_PR, agent="script:plan.toml",
        agent_digest="sha256:" + "cd" * 32,
        patch_boundary=PatchBoundary(allowed_paths=("pom.xml", "src/**"),
                                     forbidden_paths=("infra/**", ".github/**"),
                                     lockfile_patterns=("*.lock",),
                                     generated_patterns=("target/**",),
                                     allow_lockfile_changes=True),
        tool_policy=ToolPolicy(commands=CommandRules(deny=("git push *",), ask=("pip install *",),
                                                     allow=("mvn *", "true")),
                               allow_shell=False, secret_files=(".env",), env_allowlist=("PATH",),
                               env_passthrough=("OPENAI_API_KEY",), max_result_bytes=16384),
        verification_plan=VerificationPlan(
            checks=(PlannedCheck(name="unit", command="mvn -q test", junit_xml="target/r.xml"),
                    PlannedCheck(name="lint", command="make lint", required=False,
                                 timeout_seconds=30.5)),
            infra_patterns=("Could not resolve host",)),
        budget=sample_budget(),
        judge_policy=JudgePolicy(strict=True, min_confidence=0.7, command=None,
                                 timeout_seconds=120.0, max_diff_lines=1000,
                                 production_config_patterns=("**/config/**",)),
    )


def sample_budget() -> Budget:
    return Budget(max_attempts=2, wall_seconds=1800.0, max_tool_calls=500,
                  max_output_bytes=100 * 1024 * 1024, backoff_initial_seconds=1.0,
                  backoff_max_seconds=60.0)


def sample_run(**overrides: object) -> Run:
    execution = sample_spec()
    fields: dict[str, object] = dict(
        run_id="run_1", task_id="task_1", number=1, status=RunStatus.RUNNING_AGENT,
        execution_spec=execution, spec_digest=execution.digest(),
        policy_decision={"allowed": True, "reasons": [], "maxAutonomy": "supervised_pr"},
        base_commit=COMMIT, budget=sample_budget(), created_at=T0, started_at=T1,
        active_attempt_id="attempt_2", not_before=None)
    fields.update(overrides)
    return Run(**fields)  # type: ignore[arg-type]


def sample_records() -> list[object]:
    digest = sample_spec().digest()
    check = PatchBoundaryCheck(passed=False, allowed_path_violations=("README.md",),
                               forbidden_path_violations=("infra/main.tf",),
                               unexpected_generated_files=(), unexpected_lockfile_changes=(),
                               matched_rules={"infra/main.tf": "forbidden: infra/**"})
    return [
        sample_task(),
        Session(session_id="session_1", owner="alice", source=TaskSource.CLI,
                title="migrate logging", status=SessionStatus.OPEN, created_at=T0,
                last_activity_at=T1, related_tasks=("task_1", "task_2")),
        SessionMessage(message_id="message_1", session_id="session_1", role=MessageRole.SYSTEM,
                       content="Repo mana?", created_at=T0, metadata={"channel": "slack"}),
        sample_run(),
        Attempt(attempt_id="attempt_1", run_id="run_1", attempt_number=1, worker_id="worker_1",
                lease_id="lease_1", status=AttemptStatus.LEASE_EXPIRED, started_at=T0,
                last_heartbeat_at=T0, lease_expires_at=T1, ended_at=T1,
                failure_code="LEASE_EXPIRED", end_reason="worker crash after clone"),
        Step(step_id="step_1", run_id="run_1", attempt_id="attempt_2", sequence_number=3,
             type=StepType.TOOL_CALL, status=StepStatus.DENIED, title="git push", started_at=T0,
             ended_at=T1, attributes={"tool": "shell.run", "exitCode": None, "n": 3,
                                      "nested": {"a": [1, "b"]}},
             artifacts=("artifact_1",), tool_call_id="toolcall_1"),
        ToolCall(tool_call_id="toolcall_1", step_id="step_1", run_id="run_1",
                 attempt_id="attempt_2", tool_name="shell.run",
                 arguments_json='{"command": "git push origin main"}',
                 decision=ToolDecision.DENIED_BY_COMMAND_GUARD, matched_rule="deny: git push *",
                 denial_reason="git push is denied", requested_at=T0, spec_digest=digest,
                 result=ToolResult.denied(ToolDecision.DENIED_BY_COMMAND_GUARD, "denied"),
                 completed_at=T1),
        Artifact(artifact_id="artifact_1", run_id="run_1", attempt_id="attempt_2",
                 produced_by_step="step_1", type=ArtifactType.COMMAND_LOG, name="mvn-test.log",
                 uri=f"artifacts/sha256/ab/{SHA}", sha256=SHA, size_bytes=1234,
                 redaction_status=RedactionStatus.REDACTED,
                 visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER, created_at=T0,
                 spec_digest=digest, metadata={"command": "mvn -q test"}),
        Patch(patch_id="patch_1", run_id="run_1", attempt_id="attempt_2", base_commit=COMMIT,
              unified_diff_artifact="artifact_2",
              file_changes=(
                  FileChange(path="pom.xml", change_type=ChangeType.MODIFIED, additions=1,
                             deletions=1, generated=False, binary=False, lockfile=False,
                             test_file=False, forbidden_by_policy=False),
                  FileChange(path="src/new/App.java", old_path="src/old/App.java",
                             change_type=ChangeType.RENAMED, additions=0, deletions=0,
                             generated=False, binary=False, lockfile=False, test_file=False,
                             forbidden_by_policy=False)),
              stats=PatchStats(files_changed=2, additions=1, deletions=1), boundary_check=check,
              apply_status=PatchApplyStatus.DOES_NOT_APPLY, created_at=T0,
              apply_error="patch failed: pom.xml:3"),
        VerificationReport(
            verification_report_id="verification_1", run_id="run_1", attempt_id="attempt_2",
            status=VerificationStatus.FAILED,
            checks=(VerificationCheck(name="unit", command="mvn -q test",
                                      status=VerificationCheckStatus.FAILED, exit_code=1,
                                      duration_seconds=12.5, log_artifact="artifact_1",
                                      summarized_failure="mvn -q test: FooTest.bar failed",
                                      required=True, test_report_artifact="artifact_3",
                                      failing_tests=("FooTest.bar",)),),
            full_report_artifact=None, started_at=T0, ended_at=T1),
        JudgeReport(judge_report_id="judge_1", run_id="run_1", attempt_id="attempt_2",
                    judge="rules", status=JudgeStatus.NEEDS_HUMAN_REVIEW,
                    findings=(JudgeFinding(severity=Severity.ERROR, category="tests-deleted",
                                           message="test file deleted", file_path="FooTest.java",
                                           line_number=None, blocks_auto_pr=True),
                              JudgeFinding(severity=Severity.INFO, category="lockfile",
                                           message="lockfile changed")),
                    confidence=0.55, report_artifact="artifact_4", created_at=T0,
                    summary="2 finding(s)"),
        Verdict(verdict_id="verdict_1", run_id="run_1", status=VerdictStatus.SUCCESS_NEEDS_REVIEW,
                pr_eligibility=PrEligibility.ELIGIBLE_AFTER_HUMAN_APPROVAL,
                reasons=("judge NEEDS_HUMAN_REVIEW: test file deleted",),
                evidence=("artifact_1", "artifact_4"),
                chain=(ChainLink(check="boundary", passed=True, detail="ok",
                                 evidence=("artifact_2",)),
                       ChainLink(check="judge", passed=False, detail="needs review")),
                decided_at=T1, decided_by="agentctl", spec_digest=digest),
        Approval(approval_id="approval_1", run_id="run_1", verdict_id="verdict_1",
                 decision=ApprovalDecision.APPROVED, by="bob", reason="reviewed the diff",
                 created_at=T1),
        Event(seq=7, type=EventType.VERDICT_DECIDED, task_id="task_1", run_id="run_1",
              attempt_id=None, step_id=None, payload={"status": "SUCCESS", "reasons": ["a"]},
              created_at=T0, prev_hash="0" * 64, hash="f" * 64),
    ]


@pytest.fixture
def samples() -> dict[str, object]:
    """One valid record of every type of the model, by class name."""
    return {type(record).__name__: record for record in sample_records()}


@pytest.fixture
def make_run() -> Callable[..., Run]:
    """`make_run(status=..., ...)`: a valid run under a sample spec."""
    return sample_run
