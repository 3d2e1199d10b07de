"""Rows of tasks, sessions and their messages."""

from __future__ import annotations

from agentctl.domain.enums import AutonomyLevel, MessageRole, SessionStatus, TaskSource, TaskStatus, TaskType
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.store.rows import Row, RowMapping, RowValues, at, dump, iso, load


def task_to_row(r: Task) -> RowValues:
    return {
        "task_id": r.task_id,
        "source": r.source.value,
        "created_by": r.created_by,
        "task_type": r.task_type.value,
        "title": r.title,
        "instruction": r.instruction,
        "repository": r.repository,
        "base_ref": r.base_ref,
        "autonomy_level": r.autonomy_level.value,
        "status": r.status.value,
        "created_at": iso(r.created_at),
        "updated_at": iso(r.updated_at),
        "labels": dump(r.labels),
        "allowed_paths": dump(r.allowed_paths),
        "forbidden_paths": dump(r.forbidden_paths),
        "verification_commands": dump(r.verification_commands),
        "session_id": r.session_id,
        "status_reason": r.status_reason,
        "intent": dump({"mustPass": r.must_pass, "allowRemovedTests": r.allow_removed_tests})
        if r.must_pass or r.allow_removed_tests else None,
    }


def task_from_row(row: Row) -> Task:
    intent = load(row["intent"]) if row["intent"] else {}
    return Task(
        task_id=row["task_id"],
        source=TaskSource(row["source"]),
        created_by=row["created_by"],
        task_type=TaskType(row["task_type"]),
        title=row["title"],
        instruction=row["instruction"],
        repository=row["repository"],
        base_ref=row["base_ref"],
        autonomy_level=AutonomyLevel(row["autonomy_level"]),
        status=TaskStatus(row["status"]),
        created_at=at(row["created_at"]),
        updated_at=at(row["updated_at"]),
        labels=load(row["labels"]),
        allowed_paths=tuple(load(row["allowed_paths"])),
        forbidden_paths=tuple(load(row["forbidden_paths"])),
        verification_commands=tuple(load(row["verification_commands"])),
        session_id=row["session_id"],
        status_reason=row["status_reason"],
        must_pass=tuple(intent.get("mustPass", ())),
        allow_removed_tests=bool(intent.get("allowRemovedTests", False)),
    )


def session_to_row(r: Session) -> RowValues:
    return {
        "session_id": r.session_id,
        "owner": r.owner,
        "source": r.source.value,
        "title": r.title,
        "status": r.status.value,
        "created_at": iso(r.created_at),
        "last_activity_at": iso(r.last_activity_at),
    }


def session_from_row(row: Row) -> Session:
    return Session(
        session_id=row["session_id"],
        owner=row["owner"],
        source=TaskSource(row["source"]),
        title=row["title"],
        status=SessionStatus(row["status"]),
        created_at=at(row["created_at"]),
        last_activity_at=at(row["last_activity_at"]),
    )


def session_message_to_row(r: SessionMessage) -> RowValues:
    return {
        "message_id": r.message_id,
        "session_id": r.session_id,
        "role": r.role.value,
        "content": r.content,
        "created_at": iso(r.created_at),
        "metadata": dump(r.metadata),
    }


def session_message_from_row(row: Row) -> SessionMessage:
    return SessionMessage(
        message_id=row["message_id"],
        session_id=row["session_id"],
        role=MessageRole(row["role"]),
        content=row["content"],
        created_at=at(row["created_at"]),
        metadata=load(row["metadata"]),
    )


TASKS = RowMapping("task", "task_id", "task", task_to_row, task_from_row)
SESSIONS = RowMapping("session", "session_id", "session", session_to_row, session_from_row)
MESSAGES = RowMapping("session_message", "message_id", "message", session_message_to_row,
                      session_message_from_row)
