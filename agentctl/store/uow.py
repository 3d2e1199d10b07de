"""The unit of work: one transaction per use case, with the event log inside it.

`with store.unit_of_work() as uow:` commits when the block ends cleanly and rolls back when it
raises, so a command's records and the events that describe them land together or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from types import TracebackType

from sqlalchemy import Connection, Engine, Update, func, or_, select, update

from agentctl.domain.artifact import Artifact
from agentctl.domain.clock import to_iso
from agentctl.domain.enums import AttemptStatus
from agentctl.domain.errors import IllegalTransition, LeaseLost, NotFound
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.domain.transitions import UNFINISHED_RUN
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.store import tables
from agentctl.store.event_log import EventLog
from agentctl.store.repository import Repository

_ATTEMPT = tables.AttemptRow.__table__
_RUN = tables.RunRow.__table__
_TASK = tables.TaskRow.__table__
_LIVE = [AttemptStatus.STARTING.value, AttemptStatus.ACTIVE.value]


def _while_held(attempt_id: str, lease_id: str, now: datetime) -> Update:
    """An UPDATE of the attempt that matches only while it holds that unexpired lease."""
    return update(_ATTEMPT).where(
        _ATTEMPT.c.attempt_id == attempt_id,
        _ATTEMPT.c.lease_id == lease_id,
        _ATTEMPT.c.status.in_(_LIVE),
        _ATTEMPT.c.lease_expires_at > to_iso(now),
    )


class UnitOfWork:
    def __init__(self, engine: Engine,
                 on_commit: Callable[[int, str], None] | None = None) -> None:
        self._engine = engine
        self._connection: Connection | None = None
        self._on_commit = on_commit  # told the event head after a commit that appended

    def __enter__(self) -> UnitOfWork:
        connection = self._engine.connect()
        connection.begin()
        self._connection = connection
        self.tasks = Repository(connection, tables.TaskRow.__table__, Task, "task_id", "task")
        self.sessions = Repository(connection, tables.SessionRow.__table__, Session, "session_id",
                                   "session")
        self.messages = Repository(connection, tables.SessionMessageRow.__table__, SessionMessage,
                                   "message_id", "message")
        self.runs = Repository(connection, tables.RunRow.__table__, Run, "run_id", "run")
        self.attempts = Repository(connection, _ATTEMPT, Attempt, "attempt_id", "attempt")
        self.steps = Repository(connection, tables.StepRow.__table__, Step, "step_id", "step")
        self.tool_calls = Repository(connection, tables.ToolCallRow.__table__, ToolCall,
                                     "tool_call_id", "toolcall")
        self.artifacts = Repository(connection, tables.ArtifactRow.__table__, Artifact,
                                    "artifact_id", "artifact")
        self.patches = Repository(connection, tables.PatchRow.__table__, Patch, "patch_id", "patch")
        self.verifications = Repository(connection, tables.VerificationReportRow.__table__,
                                        VerificationReport, "verification_report_id",
                                        "verification")
        self.judgements = Repository(connection, tables.JudgeReportRow.__table__, JudgeReport,
                                     "judge_report_id", "judge")
        self.verdicts = Repository(connection, tables.VerdictRow.__table__, Verdict, "verdict_id",
                                   "verdict")
        self.approvals = Repository(connection, tables.ApprovalRow.__table__, Approval,
                                    "approval_id", "approval")
        self.pull_requests = Repository(connection, tables.PullRequestRow.__table__, PullRequest,
                                        "pr_id", "pr")
        self.events = EventLog(connection)
        return self

    @property
    def connection(self) -> Connection:
        assert self._connection is not None, "use the unit of work in a with-block"
        return self._connection

    def fence(self, attempt_id: str, lease_id: str, now: datetime) -> None:
        """Refuse the transaction unless this attempt still holds the run's unexpired lease.

        An UPDATE rather than a SELECT, so the check takes the row lock on databases that have
        them and a reaper expiring the lease concurrently is ordered before or after us.
        """
        result = self.connection.execute(
            _while_held(attempt_id, lease_id, now)
            .values(fenced_writes=_ATTEMPT.c.fenced_writes + 1)
        )
        if result.rowcount != 1:
            raise LeaseLost(f"attempt {attempt_id} no longer holds lease {lease_id}; write refused")

    def extend_lease(self, attempt_id: str, lease_id: str, now: datetime, until: datetime) -> bool:
        """A heartbeat: push the expiry forward, only while the lease is still held."""
        result = self.connection.execute(
            _while_held(attempt_id, lease_id, now)
            .values(last_heartbeat_at=to_iso(now), lease_expires_at=to_iso(until))
        )
        return result.rowcount == 1

    def queued_run_ids(self, now: datetime, limit: int) -> list[str]:
        """Runs waiting for a worker whose backoff has passed, oldest first."""
        query = (
            select(_RUN.c.run_id)
            .where(_RUN.c.status == "QUEUED",
                   or_(_RUN.c.not_before.is_(None), _RUN.c.not_before <= to_iso(now)))
            .order_by(_RUN.c.run_id)
            .limit(limit)
        )
        return list(self.connection.execute(query).scalars())

    def expired_attempt_ids(self, now: datetime) -> list[str]:
        """Live attempts whose lease ran out: their worker died or hangs."""
        query = select(_ATTEMPT.c.attempt_id).where(
            _ATTEMPT.c.status.in_(_LIVE), _ATTEMPT.c.lease_expires_at <= to_iso(now))
        return list(self.connection.execute(query).scalars())

    def unfinished_runs(self, task_id: str, *, besides: str) -> int:
        query = select(func.count()).select_from(_RUN).where(
            _RUN.c.task_id == task_id, _RUN.c.run_id != besides,
            _RUN.c.status.in_([status.value for status in UNFINISHED_RUN]))
        return int(self.connection.execute(query).scalar() or 0)

    def run_status(self, run_id: str) -> str:
        """Just the status: moving a run along does not need its whole spec decoded."""
        status = self.connection.execute(
            select(_RUN.c.status).where(_RUN.c.run_id == run_id)).scalar()
        if status is None:
            raise NotFound(f"no run {run_id}")
        return str(status)

    def task_status(self, task_id: str) -> str:
        status = self.connection.execute(
            select(_TASK.c.status).where(_TASK.c.task_id == task_id)).scalar()
        if status is None:
            raise NotFound(f"no task {task_id}")
        return str(status)

    def set_run_status(self, run_id: str, *, expected: str, target: str) -> None:
        """Compare-and-set of a run's status (the transition rule was checked by the caller)."""
        result = self.connection.execute(
            update(_RUN).where(_RUN.c.run_id == run_id, _RUN.c.status == expected)
            .values(status=target))
        if result.rowcount != 1:
            raise IllegalTransition("run", expected, target, f"{run_id} changed concurrently")

    def next_run_number(self, task_id: str) -> int:
        query = select(func.max(_RUN.c.number)).where(_RUN.c.task_id == task_id)
        return int(self.connection.execute(query).scalar() or 0) + 1

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        connection = self.connection
        try:
            if exc_type is None:
                self.events.flush_head()
                connection.commit()
                if self._on_commit is not None and self.events.appended is not None:
                    self._on_commit(*self.events.appended)
            else:
                connection.rollback()
        finally:
            connection.close()
            self._connection = None
