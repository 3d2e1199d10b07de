"""The schema: one SQLModel table per record; column names are the domain field names.

Rows carry no rules. Nested values (specs, file changes, reasons) are JSON text so that the lean
read path can decode them with the standard library alone. Times are ISO 8601 UTC text, which
sorts correctly and reads the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

from sqlalchemy import Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

SCHEMA_VERSION = 1


def _json() -> object:
    return Field(default="{}", sa_column=Column(Text, nullable=False))


def _text(nullable: bool = True) -> object:
    return Field(default=None, sa_column=Column(Text, nullable=nullable))


class TaskRow(SQLModel, table=True):
    __tablename__ = "task"
    task_id: str = Field(primary_key=True)
    source: str
    created_by: str
    task_type: str
    title: str
    instruction: str = _text(nullable=False)
    repository: str | None = None
    base_ref: str
    autonomy_level: str
    status: str = Field(index=True)
    status_reason: str | None = _text()
    created_at: str = Field(index=True)
    updated_at: str
    labels: str = _json()
    allowed_paths: str = _json()
    forbidden_paths: str = _json()
    verification_commands: str = _json()
    session_id: str | None = Field(default=None, index=True)


class SessionRow(SQLModel, table=True):
    __tablename__ = "session"
    session_id: str = Field(primary_key=True)
    owner: str
    source: str
    title: str
    status: str
    created_at: str = Field(index=True)
    last_activity_at: str


class SessionMessageRow(SQLModel, table=True):
    __tablename__ = "session_message"
    message_id: str = Field(primary_key=True)
    session_id: str = Field(index=True)
    role: str
    content: str = _text(nullable=False)
    created_at: str
    metadata_: str = Field(default="{}", sa_column=Column("metadata", Text, nullable=False))


class RunRow(SQLModel, table=True):
    __tablename__ = "run"
    __table_args__ = (UniqueConstraint("task_id", "number"),)
    run_id: str = Field(primary_key=True)
    task_id: str = Field(index=True)
    number: int
    status: str = Field(index=True)
    execution_spec: str = _json()
    spec_digest: str
    policy_decision: str = _json()
    base_commit: str
    budget: str = _json()
    created_at: str = Field(index=True)
    started_at: str | None = None
    completed_at: str | None = None
    failure_summary: str | None = _text()
    active_attempt_id: str | None = None
    not_before: str | None = None
    cancel_requested_by: str | None = None
    cancel_reason: str | None = _text()


class AttemptRow(SQLModel, table=True):
    __tablename__ = "attempt"
    __table_args__ = (UniqueConstraint("run_id", "attempt_number"),)
    attempt_id: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    attempt_number: int
    worker_id: str
    lease_id: str
    status: str = Field(index=True)
    started_at: str
    last_heartbeat_at: str
    lease_expires_at: str
    ended_at: str | None = None
    failure_code: str | None = None
    end_reason: str | None = _text()
    fenced_writes: int = 0


class StepRow(SQLModel, table=True):
    __tablename__ = "step"
    __table_args__ = (Index("ix_step_attempt_seq", "attempt_id", "sequence_number"),)
    step_id: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    attempt_id: str
    sequence_number: int
    type: str
    status: str
    title: str = _text(nullable=False)
    started_at: str
    ended_at: str | None = None
    attributes: str = _json()
    artifacts: str = _json()
    failure_code: str | None = None
    tool_call_id: str | None = None


class ToolCallRow(SQLModel, table=True):
    __tablename__ = "tool_call"
    tool_call_id: str = Field(primary_key=True)
    step_id: str = Field(index=True)
    run_id: str = Field(index=True)
    attempt_id: str
    tool_name: str
    arguments_json: str = _text(nullable=False)
    decision: str
    matched_rule: str | None = _text()
    denial_reason: str | None = _text()
    result: str | None = _text()
    requested_at: str
    completed_at: str | None = None
    spec_digest: str
    approved_by: str | None = None


class ArtifactRow(SQLModel, table=True):
    __tablename__ = "artifact"
    artifact_id: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    attempt_id: str
    produced_by_step: str
    type: str
    name: str
    uri: str
    sha256: str
    size_bytes: int
    redaction_status: str
    visibility: str
    created_at: str
    spec_digest: str
    metadata_: str = Field(default="{}", sa_column=Column("metadata", Text, nullable=False))


class PatchRow(SQLModel, table=True):
    __tablename__ = "patch"
    patch_id: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    attempt_id: str
    base_commit: str
    unified_diff_artifact: str
    file_changes: str = _json()
    stats: str = _json()
    boundary_check: str = _json()
    apply_status: str
    apply_error: str | None = _text()
    created_at: str
    tree_id: str | None = None


class VerificationReportRow(SQLModel, table=True):
    __tablename__ = "verification_report"
    verification_report_id: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    attempt_id: str
    status: str
    checks: str = _json()
    full_report_artifact: str | None = None
    started_at: str
    ended_at: str


class JudgeReportRow(SQLModel, table=True):
    __tablename__ = "judge_report"
    judge_report_id: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    attempt_id: str
    judge: str
    status: str
    findings: str = _json()
    confidence: float
    report_artifact: str | None = None
    created_at: str
    summary: str | None = _text()


class VerdictRow(SQLModel, table=True):
    __tablename__ = "verdict"
    verdict_id: str = Field(primary_key=True)
    run_id: str = Field(unique=True)
    status: str
    pr_eligibility: str
    reasons: str = _json()
    evidence: str = _json()
    chain: str = _json()
    decided_at: str
    decided_by: str
    spec_digest: str
    tree_id: str | None = None


class ApprovalRow(SQLModel, table=True):
    __tablename__ = "approval"
    approval_id: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    verdict_id: str
    decision: str
    by: str
    reason: str = _text(nullable=False)
    created_at: str


class PullRequestRow(SQLModel, table=True):
    __tablename__ = "pull_request"
    pr_id: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    repository: str
    branch: str
    commit_sha: str
    base_commit: str
    remote: str | None = None
    draft: bool = False
    body_artifact: str
    url: str | None = None
    created_by: str
    created_at: str


class EventRow(SQLModel, table=True):
    __tablename__ = "event"
    seq: int = Field(primary_key=True)
    type: str
    task_id: str | None = Field(default=None, index=True)
    run_id: str | None = Field(default=None, index=True)
    attempt_id: str | None = None
    step_id: str | None = None
    payload: str = _json()
    created_at: str
    prev_hash: str
    hash: str


class EventHeadRow(SQLModel, table=True):
    """The chain's last (seq, hash), so that deleting the newest events is detected too."""

    __tablename__ = "event_head"
    id: int = Field(primary_key=True)
    seq: int
    hash: str


class MetaRow(SQLModel, table=True):
    __tablename__ = "meta"
    key: str = Field(primary_key=True)
    value: str
