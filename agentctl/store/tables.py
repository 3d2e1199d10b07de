"""The schema: one SQLAlchemy Core table per record; column names are the domain field names.

Rows carry no rules. Nested values (specs, file changes, reasons) are JSON text so that the lean
read path can decode them with the standard library alone. Times are ISO 8601 UTC text, which
sorts correctly and reads the same on SQLite and PostgreSQL. Changes to this file need a
migration under `migrations/versions` (the test of the migrations compares both).
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()


def _key(name: str) -> Column[str]:
    return Column(name, String, primary_key=True)


def _str(name: str, *, index: bool = False, unique: bool = False) -> Column[str]:
    return Column(name, String, nullable=False, index=index, unique=unique)


def _opt(name: str, *, index: bool = False) -> Column[str]:
    return Column(name, String, nullable=True, index=index)


def _text(name: str) -> Column[str]:
    return Column(name, Text, nullable=False)


def _opt_text(name: str) -> Column[str]:
    return Column(name, Text, nullable=True)


def _json(name: str) -> Column[str]:
    return Column(name, Text, nullable=False, default="{}")


def _int(name: str, default: int | None = None) -> Column[int]:
    return Column(name, Integer, nullable=False, default=default)


task = Table(
    "task", metadata,
    _key("task_id"), _str("source"), _str("created_by"), _str("task_type"), _str("title"),
    _text("instruction"), _opt("repository"), _str("base_ref"), _str("autonomy_level"),
    _str("status", index=True), _opt_text("status_reason"), _str("created_at", index=True),
    _str("updated_at"), _json("labels"), _json("allowed_paths"), _json("forbidden_paths"),
    _json("verification_commands"), _opt("session_id", index=True), _opt_text("intent"),
)

session = Table(
    "session", metadata,
    _key("session_id"), _str("owner"), _str("source"), _str("title"), _str("status"),
    _str("created_at", index=True), _str("last_activity_at"),
)

session_message = Table(
    "session_message", metadata,
    _key("message_id"), _str("session_id", index=True), _str("role"), _text("content"),
    _str("created_at"), _json("metadata"),
)

run = Table(
    "run", metadata,
    _key("run_id"), _str("task_id", index=True), _int("number"), _str("status", index=True),
    _json("execution_spec"), _str("spec_digest"), _json("policy_decision"), _str("base_commit"),
    _json("budget"), _str("created_at", index=True), _opt("started_at"), _opt("completed_at"),
    _opt_text("failure_summary"), _opt("active_attempt_id"), _opt("not_before"),
    _opt("cancel_requested_by"), _opt_text("cancel_reason"), _opt("replay_of"),
    UniqueConstraint("task_id", "number"),
)

attempt = Table(
    "attempt", metadata,
    _key("attempt_id"), _str("run_id", index=True), _int("attempt_number"), _str("worker_id"),
    _str("lease_id"), _str("status", index=True), _str("started_at"), _str("last_heartbeat_at"),
    _str("lease_expires_at"), _opt("ended_at"), _opt("failure_code"), _opt_text("end_reason"),
    _int("fenced_writes", default=0),
    Column("directory", Text, nullable=True, index=True),  # its private directory, to sweep
    UniqueConstraint("run_id", "attempt_number"),
)

step = Table(
    "step", metadata,
    _key("step_id"), _str("run_id", index=True), _str("attempt_id"), _int("sequence_number"),
    _str("type"), _str("status"), _text("title"), _str("started_at"), _opt("ended_at"),
    _json("attributes"), _json("artifacts"), _opt("failure_code"), _opt("tool_call_id"),
    Index("ix_step_attempt_seq", "attempt_id", "sequence_number"),
)

tool_call = Table(
    "tool_call", metadata,
    _key("tool_call_id"), _str("step_id", index=True), _str("run_id", index=True),
    _str("attempt_id"), _str("tool_name"), _text("arguments_json"), _str("decision"),
    _opt_text("matched_rule"), _opt_text("denial_reason"), _opt_text("result"),
    _str("requested_at"), _opt("completed_at"), _str("spec_digest"), _opt("approved_by"),
)

artifact = Table(
    "artifact", metadata,
    _key("artifact_id"), _str("run_id", index=True), _str("attempt_id"), _str("produced_by_step"),
    _str("type"), _str("name"), _str("uri"), _str("sha256"), _int("size_bytes"),
    _str("redaction_status"), _str("visibility"), _str("created_at"), _str("spec_digest"),
    _json("metadata"),
)

patch = Table(
    "patch", metadata,
    _key("patch_id"), _str("run_id", index=True), _str("attempt_id"), _str("base_commit"),
    _str("unified_diff_artifact"), _json("file_changes"), _json("stats"),
    _json("boundary_check"), _str("apply_status"), _opt_text("apply_error"), _str("created_at"),
    _opt("tree_id"),
)

verification_report = Table(
    "verification_report", metadata,
    _key("verification_report_id"), _str("run_id", index=True), _str("attempt_id"),
    _str("status"), _json("checks"), _opt("full_report_artifact"), _str("started_at"),
    _str("ended_at"),
)

judge_report = Table(
    "judge_report", metadata,
    _key("judge_report_id"), _str("run_id", index=True), _str("attempt_id"), _str("judge"),
    _str("status"), _json("findings"), Column("confidence", Float, nullable=False),
    _opt("report_artifact"), _str("created_at"), _opt_text("summary"),
)

verdict = Table(
    "verdict", metadata,
    _key("verdict_id"), _str("run_id", unique=True), _str("status"), _str("pr_eligibility"),
    _json("reasons"), _json("evidence"), _json("chain"), _str("decided_at"), _str("decided_by"),
    _str("spec_digest"), _opt("tree_id"),
)

approval = Table(
    "approval", metadata,
    _key("approval_id"), _str("run_id", index=True), _str("verdict_id"), _str("decision"),
    _str("by"), _text("reason"), _str("created_at"),
)

pull_request = Table(
    "pull_request", metadata,
    _key("pr_id"), _str("run_id", index=True), _str("repository"), _str("branch"),
    _str("commit_sha"), _str("base_commit"), _opt("remote"),
    Column("draft", Boolean, nullable=False, default=False), _str("body_artifact"), _opt("url"),
    _str("created_by"), _str("created_at"),
    # with the defaults migration 0003 gave the rows made before it (a new home is made from
    # this table, an old one by the migration: the same columns either way)
    Column("forge", String, nullable=False, server_default="none"), Column("number", Integer),
    _opt("base"), Column("state", String, nullable=False, server_default="BRANCH"),
)

event = Table(
    "event", metadata,
    Column("seq", Integer, primary_key=True), _str("type"), _opt("task_id", index=True),
    _opt("run_id", index=True), _opt("attempt_id"), _opt("step_id"), _json("payload"),
    _str("created_at"), _str("prev_hash"), _str("hash"),
)

# The chain's last (seq, hash), so that deleting the newest events is detected too; its one row
# is also the lock that orders appends from concurrent writers.
event_head = Table(
    "event_head", metadata,
    Column("id", Integer, primary_key=True), _int("seq"), _str("hash"),
)

meta = Table(
    "meta", metadata,
    _key("key"), _str("value"),
)
