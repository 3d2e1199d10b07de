"""The unit of work: one transaction per use case, with the event log inside it.

`with store.unit_of_work() as uow:` commits when the block ends cleanly and rolls back when it
raises, so a command's records and the events that describe them land together or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Select,
    Table,
    Update,
    bindparam,
    func,
    literal,
    or_,
    select,
    text,
    update,
)

from agentctl.domain.clock import to_iso
from agentctl.domain.enums import AttemptStatus, RunStatus, TaskStatus
from agentctl.domain.errors import IllegalTransition, LeaseLost, NotFound
from agentctl.domain.run import Attempt, Run
from agentctl.domain.transitions import UNFINISHED_RUN
from agentctl.store import tables
from agentctl.store.engine import reconnecting
from agentctl.store.event_log import EventLog
from agentctl.store.pending import PendingRows, columns
from agentctl.store.prebuilt import Prebuilt
from agentctl.store.rows import RowMapping
from agentctl.store.rows import evidence as evidence_rows
from agentctl.store.rows import runs as run_rows
from agentctl.store.rows import tasks as task_rows
from agentctl.store.seals import SEALED, seal_rows
from agentctl.store.table_repository import Repository

if TYPE_CHECKING:
    from agentctl.services.unit_of_work import Pending

_ATTEMPT = tables.attempt
_RUN = tables.run
_TASK = tables.task
WAKE_CHANNEL = "agentctl_work"
R = TypeVar("R")
_LIVE = [AttemptStatus.STARTING.value, AttemptStatus.ACTIVE.value]
_IS_LIVE = _ATTEMPT.c.status.in_([literal(status) for status in _LIVE])  # fixed values: prebuilt


def _while_held() -> Update:
    """An UPDATE of the attempt that matches only while it holds that unexpired lease."""
    return update(_ATTEMPT).where(
        _ATTEMPT.c.attempt_id == bindparam("attempt_id"),
        _ATTEMPT.c.lease_id == bindparam("lease_id"),
        _IS_LIVE,
        _ATTEMPT.c.lease_expires_at > bindparam("now"),
    )


_FENCE = Prebuilt(_while_held().values(fenced_writes=_ATTEMPT.c.fenced_writes + 1))
_EXTEND = Prebuilt(_while_held().values(last_heartbeat_at=bindparam("beat"),
                                        lease_expires_at=bindparam("until")))
_RUN_STATUS = Prebuilt(select(_RUN.c.status).where(_RUN.c.run_id == bindparam("id")))
_TASK_STATUS = Prebuilt(select(_TASK.c.status).where(_TASK.c.task_id == bindparam("id")))
_SET_RUN_STATUS = Prebuilt(update(_RUN).where(_RUN.c.run_id == bindparam("id"),
                                              _RUN.c.status == bindparam("expected"))
                           .values(status=bindparam("target")))
_RECORD_DIRECTORY = Prebuilt(update(_ATTEMPT).where(_ATTEMPT.c.attempt_id == bindparam("id"))
                             .values(directory=bindparam("directory")))
_NEXT_QUEUED = Prebuilt(
    select(_RUN)
    .where(_RUN.c.status == literal(RunStatus.QUEUED.value),
           or_(_RUN.c.not_before.is_(None), _RUN.c.not_before <= bindparam("now")))
    .order_by(_RUN.c.run_id)
    .limit(1)
    .with_for_update(skip_locked=True))


def _expired() -> Select[Any]:
    return (select(_ATTEMPT)
            .where(_IS_LIVE, _ATTEMPT.c.lease_expires_at <= bindparam("now"))
            .order_by(_ATTEMPT.c.lease_expires_at, _ATTEMPT.c.attempt_id))


_EXPIRED = Prebuilt(_expired().with_for_update(skip_locked=True))


@lru_cache(maxsize=8)
def _expired_up_to(limit: int) -> Prebuilt:
    return Prebuilt(_expired().limit(limit).with_for_update(skip_locked=True))


def _held(attempt_id: str, lease_id: str, now: datetime) -> dict[str, object]:
    return {"attempt_id": attempt_id, "lease_id": lease_id, "now": to_iso(now)}


class UnitOfWork:
    def __init__(self, engine: Engine,
                 on_commit: Callable[[int, str], None] | None = None) -> None:
        self._engine = engine
        self._connection: Connection | None = None
        self._on_commit = on_commit  # told the event head after a commit that appended

    def __enter__(self) -> UnitOfWork:
        connection = reconnecting(self._engine, self._begin)
        self._connection = connection
        self.touched: dict[str, set[str]] = {name: set() for name in SEALED}  # updated ids
        self.inserted: dict[str, dict[str, str]] = {name: {} for name in SEALED}  # id -> seal
        self.tasks = self._repository(tables.task, task_rows.TASKS)
        self.sessions = self._repository(tables.session, task_rows.SESSIONS)
        self.messages = self._repository(tables.session_message, task_rows.MESSAGES)
        self.runs = self._repository(tables.run, run_rows.RUNS)
        self.attempts = self._repository(tables.attempt, run_rows.ATTEMPTS)
        self.steps = self._repository(tables.step, run_rows.STEPS)
        self.tool_calls = self._repository(tables.tool_call, run_rows.TOOL_CALLS)
        self.artifacts = self._repository(tables.artifact, run_rows.ARTIFACTS)
        self.patches = self._repository(tables.patch, evidence_rows.PATCHES)
        self.verifications = self._repository(tables.verification_report,
                                              evidence_rows.VERIFICATIONS)
        self.judgements = self._repository(tables.judge_report, evidence_rows.JUDGEMENTS)
        self.verdicts = self._repository(tables.verdict, evidence_rows.VERDICTS)
        self.approvals = self._repository(tables.approval, evidence_rows.APPROVALS)
        self.pull_requests = self._repository(tables.pull_request, evidence_rows.PULL_REQUESTS)
        self.events = EventLog(connection)
        return self

    def _repository(self, table: Table, mapping: RowMapping[R]) -> Repository[R]:
        return Repository(self.connection, table, mapping, self.touched[table.name],
                          self.inserted[table.name])

    def _begin(self) -> Connection:
        connection = self._engine.connect()
        try:
            connection.begin()
        except BaseException:
            connection.close()
            raise
        return connection

    @property
    def connection(self) -> Connection:
        assert self._connection is not None, "use the unit of work in a with-block"
        return self._connection

    def write_pending(self, pending: Pending) -> None:
        """Insert what `pending` holds (steps, tool calls, artifacts) and append its events."""
        if not isinstance(pending, PendingRows):
            raise TypeError(f"{type(pending).__name__} holds writes for another store")
        self.steps.add_rows(columns(tables.step), pending.steps)
        self.tool_calls.add_rows(columns(tables.tool_call), pending.tool_calls)
        self.artifacts.add_rows(columns(tables.artifact), pending.artifacts)
        self.events.append_stored(pending.first_event, pending.events)

    def fence(self, attempt_id: str, lease_id: str, now: datetime) -> None:
        """Refuse the transaction unless this attempt still holds the run's unexpired lease.

        An UPDATE rather than a SELECT, so the check takes the row lock on databases that have
        them and a reaper expiring the lease concurrently is ordered before or after us.
        """
        result = _FENCE.run(self.connection, _held(attempt_id, lease_id, now))
        if result.rowcount != 1:
            raise LeaseLost(f"attempt {attempt_id} no longer holds lease {lease_id}; write refused")

    def extend_lease(self, attempt_id: str, lease_id: str, now: datetime, until: datetime) -> bool:
        """A heartbeat: push the expiry forward, only while the lease is still held."""
        result = _EXTEND.run(self.connection, {**_held(attempt_id, lease_id, now),
                                               "beat": to_iso(now), "until": to_iso(until)})
        return result.rowcount == 1

    def next_queued_run(self, now: datetime) -> Run | None:
        """The oldest queued run whose backoff has passed and that no other claimer holds,
        locked until this transaction ends: concurrent workers each get a different one."""
        found = self.runs.claim(_NEXT_QUEUED, {"now": to_iso(now)})
        return found[0] if found else None

    def expired_attempts(self, now: datetime, *, limit: int | None = None) -> list[Attempt]:
        """Live attempts whose lease ran out (their worker died or hangs), locked; those another
        worker is reclaiming right now are skipped."""
        query = _EXPIRED if limit is None else _expired_up_to(limit)
        return self.attempts.claim(query, {"now": to_iso(now)})

    def record_directory(self, attempt_id: str, directory: str) -> None:
        """Whose directory this is: what the sweep of a dead attempt's leftovers goes by."""
        _RECORD_DIRECTORY.run(self.connection, {"id": attempt_id, "directory": directory})

    def directories(self, attempt_ids: list[str]) -> list[str]:
        """The recorded directories of these attempts."""
        if not attempt_ids:
            return []
        query = select(_ATTEMPT.c.directory).where(_ATTEMPT.c.attempt_id.in_(attempt_ids),
                                                   _ATTEMPT.c.directory.is_not(None))
        return [str(directory) for directory in self.connection.execute(query).scalars()]

    def wake_workers(self) -> None:
        """A hint to idle workers that a run was queued, sent when this transaction commits
        (PostgreSQL NOTIFY); workers poll anyway, so nothing depends on it arriving."""
        if self.connection.dialect.name == "postgresql":
            self.connection.execute(text("SELECT pg_notify(:channel, '')"),
                                    {"channel": WAKE_CHANNEL})

    def unfinished_runs(self, task_id: str, *, besides: str) -> int:
        query = select(func.count()).select_from(_RUN).where(
            _RUN.c.task_id == task_id, _RUN.c.run_id != besides,
            _RUN.c.status.in_([status.value for status in UNFINISHED_RUN]))
        return int(self.connection.execute(query).scalar() or 0)

    def run_status(self, run_id: str) -> RunStatus:
        """Just the status: moving a run along does not need its whole spec decoded."""
        status = _RUN_STATUS.run(self.connection, {"id": run_id}).scalar()
        if status is None:
            raise NotFound(f"no run {run_id}")
        return RunStatus(status)

    def task_status(self, task_id: str) -> TaskStatus:
        status = _TASK_STATUS.run(self.connection, {"id": task_id}).scalar()
        if status is None:
            raise NotFound(f"no task {task_id}")
        return TaskStatus(status)

    def set_run_status(self, run_id: str, *, expected: RunStatus, target: RunStatus) -> None:
        """Compare-and-set of a run's status (the transition rule was checked by the caller)."""
        result = _SET_RUN_STATUS.run(self.connection, {"id": run_id, "expected": expected.value,
                                                        "target": target.value})
        if result.rowcount != 1:
            raise IllegalTransition("run", expected.value, target.value,
                                    f"{run_id} changed concurrently")
        self.touched["run"].add(run_id)

    def next_run_number(self, task_id: str) -> int:
        query = select(func.max(_RUN.c.number)).where(_RUN.c.task_id == task_id)
        return int(self.connection.execute(query).scalar() or 0) + 1

    def _seal(self) -> None:
        """Every row this transaction wrote, sealed into its first event: inserted rows from
        the values inserted, updated ones read back as they now are."""
        sealed = {name: dict(rows) for name, rows in self.inserted.items() if rows}
        touched = {name: keys for name, keys in self.touched.items() if keys}
        for name, rows in seal_rows(self.connection, touched).items():
            sealed.setdefault(name, {}).update(rows)
        if sealed:
            self.events.seal(sealed)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        connection = self.connection
        try:
            if exc_type is None:
                self._seal()
                self.events.flush_head()
                connection.commit()
                if self._on_commit is not None and self.events.appended is not None:
                    self._on_commit(*self.events.appended)
            else:
                connection.rollback()
        finally:
            connection.close()
            self._connection = None
