"""The schema as it was before migrations existed (agentctl at commit e7985e3).

Revision ID: 0001
Revises:
Homes made before migrations have this schema (or 0002's, see `migrate._legacy_revision`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "approval",
        sa.Column("approval_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("verdict_id", sa.String(), nullable=False),
        sa.Column("decision", sa.String(), nullable=False),
        sa.Column("by", sa.String(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
    )
    op.create_index("ix_approval_run_id", "approval", ["run_id"], unique=False)
    op.create_table(
        "artifact",
        sa.Column("artifact_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("attempt_id", sa.String(), nullable=False),
        sa.Column("produced_by_step", sa.String(), nullable=False),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("uri", sa.String(), nullable=False),
        sa.Column("sha256", sa.String(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("redaction_status", sa.String(), nullable=False),
        sa.Column("visibility", sa.String(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("spec_digest", sa.String(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
    )
    op.create_index("ix_artifact_run_id", "artifact", ["run_id"], unique=False)
    op.create_table(
        "attempt",
        sa.Column("attempt_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("attempt_number", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(), nullable=False),
        sa.Column("lease_id", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("started_at", sa.String(), nullable=False),
        sa.Column("last_heartbeat_at", sa.String(), nullable=False),
        sa.Column("lease_expires_at", sa.String(), nullable=False),
        sa.Column("ended_at", sa.String(), nullable=True),
        sa.Column("failure_code", sa.String(), nullable=True),
        sa.Column("end_reason", sa.Text(), nullable=True),
        sa.Column("fenced_writes", sa.Integer(), nullable=False),
        sa.UniqueConstraint("run_id", "attempt_number"),
    )
    op.create_index("ix_attempt_run_id", "attempt", ["run_id"], unique=False)
    op.create_index("ix_attempt_status", "attempt", ["status"], unique=False)
    op.create_table(
        "event",
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=True),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("attempt_id", sa.String(), nullable=True),
        sa.Column("step_id", sa.String(), nullable=True),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("prev_hash", sa.String(), nullable=False),
        sa.Column("hash", sa.String(), nullable=False),
    )
    op.create_index("ix_event_run_id", "event", ["run_id"], unique=False)
    op.create_index("ix_event_task_id", "event", ["task_id"], unique=False)
    op.create_table(
        "event_head",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("hash", sa.String(), nullable=False),
    )
    op.create_table(
        "judge_report",
        sa.Column("judge_report_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("attempt_id", sa.String(), nullable=False),
        sa.Column("judge", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("findings", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("report_artifact", sa.String(), nullable=True),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
    )
    op.create_index("ix_judge_report_run_id", "judge_report", ["run_id"], unique=False)
    op.create_table(
        "meta",
        sa.Column("key", sa.String(), primary_key=True),
        sa.Column("value", sa.String(), nullable=False),
    )
    op.create_table(
        "patch",
        sa.Column("patch_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("attempt_id", sa.String(), nullable=False),
        sa.Column("base_commit", sa.String(), nullable=False),
        sa.Column("unified_diff_artifact", sa.String(), nullable=False),
        sa.Column("file_changes", sa.Text(), nullable=False),
        sa.Column("stats", sa.Text(), nullable=False),
        sa.Column("boundary_check", sa.Text(), nullable=False),
        sa.Column("apply_status", sa.String(), nullable=False),
        sa.Column("apply_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.String(), nullable=False),
    )
    op.create_index("ix_patch_run_id", "patch", ["run_id"], unique=False)
    op.create_table(
        "pull_request",
        sa.Column("pr_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("repository", sa.String(), nullable=False),
        sa.Column("branch", sa.String(), nullable=False),
        sa.Column("commit_sha", sa.String(), nullable=False),
        sa.Column("base_commit", sa.String(), nullable=False),
        sa.Column("remote", sa.String(), nullable=True),
        sa.Column("draft", sa.Boolean(), nullable=False),
        sa.Column("body_artifact", sa.String(), nullable=False),
        sa.Column("url", sa.String(), nullable=True),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
    )
    op.create_index("ix_pull_request_run_id", "pull_request", ["run_id"], unique=False)
    op.create_table(
        "run",
        sa.Column("run_id", sa.String(), primary_key=True),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("execution_spec", sa.Text(), nullable=False),
        sa.Column("spec_digest", sa.String(), nullable=False),
        sa.Column("policy_decision", sa.Text(), nullable=False),
        sa.Column("base_commit", sa.String(), nullable=False),
        sa.Column("budget", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("started_at", sa.String(), nullable=True),
        sa.Column("completed_at", sa.String(), nullable=True),
        sa.Column("failure_summary", sa.Text(), nullable=True),
        sa.Column("active_attempt_id", sa.String(), nullable=True),
        sa.Column("not_before", sa.String(), nullable=True),
        sa.Column("cancel_requested_by", sa.String(), nullable=True),
        sa.Column("cancel_reason", sa.Text(), nullable=True),
        sa.UniqueConstraint("task_id", "number"),
    )
    op.create_index("ix_run_created_at", "run", ["created_at"], unique=False)
    op.create_index("ix_run_status", "run", ["status"], unique=False)
    op.create_index("ix_run_task_id", "run", ["task_id"], unique=False)
    op.create_table(
        "session",
        sa.Column("session_id", sa.String(), primary_key=True),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("last_activity_at", sa.String(), nullable=False),
    )
    op.create_index("ix_session_created_at", "session", ["created_at"], unique=False)
    op.create_table(
        "session_message",
        sa.Column("message_id", sa.String(), primary_key=True),
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
    )
    op.create_index("ix_session_message_session_id", "session_message", ["session_id"], unique=False)
    op.create_table(
        "step",
        sa.Column("step_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("attempt_id", sa.String(), nullable=False),
        sa.Column("sequence_number", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("started_at", sa.String(), nullable=False),
        sa.Column("ended_at", sa.String(), nullable=True),
        sa.Column("attributes", sa.Text(), nullable=False),
        sa.Column("artifacts", sa.Text(), nullable=False),
        sa.Column("failure_code", sa.String(), nullable=True),
        sa.Column("tool_call_id", sa.String(), nullable=True),
    )
    op.create_index("ix_step_attempt_seq", "step", ["attempt_id", "sequence_number"], unique=False)
    op.create_index("ix_step_run_id", "step", ["run_id"], unique=False)
    op.create_table(
        "task",
        sa.Column("task_id", sa.String(), primary_key=True),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("task_type", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("instruction", sa.Text(), nullable=False),
        sa.Column("repository", sa.String(), nullable=True),
        sa.Column("base_ref", sa.String(), nullable=False),
        sa.Column("autonomy_level", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("updated_at", sa.String(), nullable=False),
        sa.Column("labels", sa.Text(), nullable=False),
        sa.Column("allowed_paths", sa.Text(), nullable=False),
        sa.Column("forbidden_paths", sa.Text(), nullable=False),
        sa.Column("verification_commands", sa.Text(), nullable=False),
        sa.Column("session_id", sa.String(), nullable=True),
    )
    op.create_index("ix_task_created_at", "task", ["created_at"], unique=False)
    op.create_index("ix_task_session_id", "task", ["session_id"], unique=False)
    op.create_index("ix_task_status", "task", ["status"], unique=False)
    op.create_table(
        "tool_call",
        sa.Column("tool_call_id", sa.String(), primary_key=True),
        sa.Column("step_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("attempt_id", sa.String(), nullable=False),
        sa.Column("tool_name", sa.String(), nullable=False),
        sa.Column("arguments_json", sa.Text(), nullable=False),
        sa.Column("decision", sa.String(), nullable=False),
        sa.Column("matched_rule", sa.Text(), nullable=True),
        sa.Column("denial_reason", sa.Text(), nullable=True),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("requested_at", sa.String(), nullable=False),
        sa.Column("completed_at", sa.String(), nullable=True),
        sa.Column("spec_digest", sa.String(), nullable=False),
        sa.Column("approved_by", sa.String(), nullable=True),
    )
    op.create_index("ix_tool_call_run_id", "tool_call", ["run_id"], unique=False)
    op.create_index("ix_tool_call_step_id", "tool_call", ["step_id"], unique=False)
    op.create_table(
        "verdict",
        sa.Column("verdict_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False, unique=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("pr_eligibility", sa.String(), nullable=False),
        sa.Column("reasons", sa.Text(), nullable=False),
        sa.Column("evidence", sa.Text(), nullable=False),
        sa.Column("chain", sa.Text(), nullable=False),
        sa.Column("decided_at", sa.String(), nullable=False),
        sa.Column("decided_by", sa.String(), nullable=False),
        sa.Column("spec_digest", sa.String(), nullable=False),
        sa.UniqueConstraint("run_id"),
    )
    op.create_table(
        "verification_report",
        sa.Column("verification_report_id", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("attempt_id", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("checks", sa.Text(), nullable=False),
        sa.Column("full_report_artifact", sa.String(), nullable=True),
        sa.Column("started_at", sa.String(), nullable=False),
        sa.Column("ended_at", sa.String(), nullable=False),
    )
    op.create_index("ix_verification_report_run_id", "verification_report", ["run_id"], unique=False)
