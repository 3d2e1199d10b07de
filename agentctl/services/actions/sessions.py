"""Sessions: the conversation that leads to tasks. Text may be messy; tasks must be structured."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from agentctl.domain import ids
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import (
    EventType,
    MessageRole,
    SessionStatus,
    TaskSource,
    choices,
)
from agentctl.domain.errors import BadInput
from agentctl.domain.events import NewEvent
from agentctl.domain.redaction import Redactor
from agentctl.domain.task import Session, SessionMessage
from agentctl.execution.environment import secret_values
from agentctl.services.unit_of_work import Events, IdKind, Repository


class SessionWork(Protocol):
    """What a session's use cases write in one transaction: sessions, messages, events."""

    @property
    def sessions(self) -> Repository[Session]: ...
    @property
    def messages(self) -> Repository[SessionMessage]: ...
    @property
    def events(self) -> Events: ...


class SessionStore(Protocol):
    """The part of the storage port the sessions use (any `Storage` is one): a narrow port
    says what a use case touches, and a fake for it needs no more."""

    def unit_of_work(self) -> AbstractContextManager[SessionWork]: ...
    def resolve(self, kind: IdKind, text: str) -> str: ...


def start_session(storage: SessionStore, *, title: str, owner: str, clock: Clock = utcnow) -> Session:
    now = clock()
    session = Session(
        session_id=ids.new_id("session"), owner=owner, source=TaskSource.CLI,
        title=title.strip(), status=SessionStatus.OPEN, created_at=now, last_activity_at=now,
    )
    with storage.unit_of_work() as uow:
        uow.sessions.add(session)
        uow.events.append(NewEvent(type=EventType.SESSION_STARTED, created_at=now,
                                   payload={"sessionId": session.session_id, "owner": owner,
                                            "title": session.title}))
    return session


def add_message(storage: SessionStore, session_text: str, *, role: str, content: str,
                clock: Clock = utcnow, at: datetime | None = None) -> SessionMessage:
    """`at`: when it was said, if earlier than now (a dialog's answers, stored at its end)."""
    try:
        message_role = MessageRole(role)
    except ValueError:
        raise BadInput(f"unknown role {role!r}; expected one of: {choices(MessageRole)}") from None
    if not content.strip():
        raise BadInput("message text is empty")
    session_id = storage.resolve("session", session_text)
    now = at or clock()
    with storage.unit_of_work() as uow:
        session = uow.sessions.get(session_id)
        message = SessionMessage(
            message_id=ids.new_id("message"), session_id=session.session_id, role=message_role,
            content=Redactor().knowing(secret_values()).clean(content), created_at=now,
        )
        uow.messages.add(message)
        uow.sessions.save(replace(session, last_activity_at=now))
        uow.events.append(NewEvent(
            type=EventType.SESSION_MESSAGE_ADDED, created_at=now,
            payload={"sessionId": session.session_id, "messageId": message.message_id,
                     "role": message_role.value, "chars": len(content)},
        ))
    return message
