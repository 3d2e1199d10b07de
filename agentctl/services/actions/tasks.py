"""Submitting and cancelling tasks."""

from __future__ import annotations

import getpass
import hashlib
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from agentctl.config import Config
from agentctl.domain import ids
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import EventType, TaskStatus
from agentctl.domain.errors import BadInput
from agentctl.domain.events import NewEvent
from agentctl.domain.redaction import Redactor
from agentctl.domain.task import (
    Session,
    Task,
    TaskPolicy,
    check_task_fields,
    default_title,
    policy_denial_reasons,
)
from agentctl.execution import task_repository as repos
from agentctl.execution.environment import secret_values
from agentctl.execution.verification import test_patch as patches
from agentctl.services.actions.requests import TaskRequest, validate
from agentctl.services.lifecycle.runs import CancelStore, request_cancellation
from agentctl.services.unit_of_work import Events, IdKind, Repository


def current_user() -> str:
    return os.environ.get("AGENTCTL_USER") or getpass.getuser()


def task_policy(config: Config) -> TaskPolicy:
    return TaskPolicy(
        max_autonomy=config.policy.max_autonomy,
        forbidden_paths=config.boundary.forbidden,
        repository_allowlist=config.policy.repository_allowlist,
        allowed_paths=config.boundary.allowed,
    )


class SubmitWork(Protocol):
    """What a submission writes in its transaction: the task, its session's last activity,
    and the events."""

    @property
    def sessions(self) -> Repository[Session]: ...
    @property
    def tasks(self) -> Repository[Task]: ...
    @property
    def events(self) -> Events: ...


class SubmitStore(Protocol):
    """The part of the storage port a submission uses (any `Storage` is one)."""

    def unit_of_work(self) -> AbstractContextManager[SubmitWork]: ...
    def resolve(self, kind: IdKind, text: str) -> str: ...


@dataclass(frozen=True, slots=True)
class Submitted:
    """A stored task and the commit its base ref named as it was submitted (None for a URL):
    a run started right away binds that commit instead of asking git again."""

    task: Task
    base_commit: str | None


def submit_task(
    storage: SubmitStore, config: Config, request: TaskRequest, *, cwd: Path,
    clock: Clock = utcnow,
) -> Task:
    """Validate, resolve the repository and base ref, apply policy, store the task.

    Bad input raises before anything is written; a policy denial is stored (with its reason)
    and returned, for the caller to report.
    """
    return submit_and_resolve(storage, config, request, cwd=cwd, clock=clock).task


def submit_and_resolve(
    storage: SubmitStore, config: Config, request: TaskRequest, *, cwd: Path,
    clock: Clock = utcnow, resolved: Callable[[str, str, str], None] | None = None,
    storing: Callable[[], None] | None = None,
) -> Submitted:
    """`submit_task`, and the commit its base ref was resolved to. `resolved(repository,
    commit, base_ref)` is told first, before the task is stored, when policy lets it run
    (`task submit --run` starts checking the base out then, and looks at the checkout);
    `storing()` last before the task is stored, whatever policy said (it may still refuse)."""
    valid = validate(request, config.policy.default_autonomy)
    redactor = Redactor().knowing(secret_values())
    instruction = redactor.clean(valid.instruction)
    title = redactor.clean((request.title or "").strip() or default_title(valid.instruction))
    labels = {key: redactor.clean(value) for key, value in request.labels.items()}
    check_task_fields(instruction=instruction, title=title, labels=labels)
    commands = tuple(c for c in request.verification_commands if c.strip())
    for command in commands:
        if redactor.redact(command)[1]:
            raise BadInput(f"verification command {redactor.clean(command)!r} holds what looks "
                           "like a secret; list the variable under [env] passthrough and refer "
                           "to it instead (its value is redacted everywhere)")
    repository = repos.resolve_repository(request.repository or "", config.repositories, cwd)
    base_ref = (request.base_ref or "").strip()
    if base_ref:
        base_commit = repos.check_base_ref(repository, base_ref)
    else:
        base_ref, base_commit = repos.default_base(repository)
    test_patch = _test_patch(request.test_patch, cwd, repository.location, base_commit)

    now = clock()
    task = Task(
        task_id=ids.new_id("task"), source=valid.source,
        created_by=request.created_by or current_user(), task_type=valid.task_type, title=title,
        instruction=instruction, repository=repository.location, base_ref=base_ref,
        autonomy_level=valid.autonomy_level, status=TaskStatus.DRAFT, created_at=now,
        updated_at=now, labels=labels, allowed_paths=valid.allowed_paths,
        forbidden_paths=valid.forbidden_paths,
        verification_commands=commands,
        session_id=request.session_id,
        must_pass=tuple(redactor.clean(t) for t in valid.must_pass),
        allow_removed_tests=bool(request.allow_removed_tests), test_patch=test_patch,
    ).with_status(TaskStatus.ACCEPTED, now)
    denials = policy_denial_reasons(
        autonomy=task.autonomy_level, allowed_paths=task.allowed_paths,
        repository=repository.location, policy=task_policy(config),
    )
    if denials:
        task = task.with_status(TaskStatus.POLICY_DENIED, now, "; ".join(denials))
    else:
        task = task.with_status(TaskStatus.READY_FOR_RUN, now)
        if resolved is not None and base_commit is not None and task.repository:
            resolved(task.repository, base_commit, base_ref)

    if storing is not None:
        storing()
    session_id = storage.resolve("session", request.session_id) if request.session_id else None
    with storage.unit_of_work() as uow:
        if session_id:
            session = uow.sessions.get(session_id)
            task = replace(task, session_id=session_id)
            uow.sessions.save(replace(session, last_activity_at=now))
        uow.tasks.add(task)
        submitted = NewEvent(
            type=EventType.TASK_SUBMITTED, created_at=now, task_id=task.task_id,
            payload={"taskType": task.task_type.value, "repository": task.repository,
                     "baseRef": task.base_ref, "autonomyLevel": task.autonomy_level.value,
                     "createdBy": task.created_by, "sessionId": task.session_id,
                     "mustPass": list(task.must_pass),
                     "allowRemovedTests": task.allow_removed_tests,
                     "testPatch": _digest(task.test_patch)},
        )
        decided = NewEvent(
            type=EventType.TASK_POLICY_DENIED if denials else EventType.TASK_ACCEPTED,
            created_at=now, task_id=task.task_id,
            payload={"status": task.status.value, "reason": task.status_reason},
        )
        uow.events.append(submitted, decided)
    return Submitted(task, base_commit)


def _test_patch(given: str | None, cwd: Path, location: str,
                base_commit: str | None) -> str | None:
    """The test patch's text, read and checked before anything is stored: a diff git can read
    that applies to the base commit (a URL's base is known only when a run starts)."""
    if given is None:
        return None
    if not given.strip():
        raise BadInput("--test-patch needs the path of a diff file")
    path = cwd / Path(given).expanduser()
    named = f"test patch {given}"
    text = patches.read_test_patch(path)
    patches.patch_paths(text, named=named)
    if base_commit is not None:
        patches.check_applies(location, base_commit, text, named=named)
    return text


def _digest(text: str | None) -> str | None:
    """What the submission event says of a test patch: its digest (the text is the task's)."""
    return None if text is None else "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def cancel_task(storage: CancelStore, task_text: str, *, by: str, reason: str,
                clock: Clock = utcnow) -> Task:
    """Cancel a task: no new run is scheduled for it; its unfinished runs are cancelled."""
    task_id = storage.resolve("task", task_text)
    now = clock()
    with storage.unit_of_work() as uow:
        task = uow.tasks.get(task_id)
        cancelled = task.with_status(TaskStatus.CANCELLED, now, reason)
        uow.tasks.save(cancelled, expected_status=task.status)
        uow.events.append(NewEvent(
            type=EventType.TASK_CANCELLED, created_at=now, task_id=task.task_id,
            payload={"by": by, "reason": reason, "previousStatus": task.status.value},
        ))
        for run in uow.runs.find(task_id=task.task_id):
            request_cancellation(uow, run, by=by, reason=f"task cancelled: {reason}", now=now)
    return cancelled
