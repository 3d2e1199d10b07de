"""The unit of work: one transaction per use case, with the event log inside it.

`with store.unit_of_work() as uow:` commits when the block ends cleanly and rolls back when it
raises, so a command's records and the events that describe them land together or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from agentctl.domain.clock import to_iso
from agentctl.domain.enums import RunStatus, TaskStatus
from agentctl.domain.errors import IllegalTransition, LeaseLost, NotFound
from agentctl.domain.run import Attempt, Run
from agentctl.store.event_log import EventLog
from agentctl.store.pending import PendingRows
from agentctl.store.prebuilt import listed, listing, named, run, run_named
from agentctl.store.rows import RowMapping
from agentctl.store.rows import evidence as evidence_rows
from agentctl.store.rows import runs as run_rows
from agentctl.store.rows import tasks as task_rows
from agentctl.store.seal_rules import LEASE_SEAL
from agentctl.store.seals import SEALED, lease_seals, seal_rows
from agentctl.store.table_repository import Repository
from agentctl.store.table_shapes import SHAPES

if TYPE_CHECKING:
    from agentctl.services.unit_of_work import Pending
    from agentctl.store.transactions import Database, Transaction

WAKE_CHANNEL = "agentctl_work"
R = TypeVar("R")


def _held(attempt_id: str, lease_id: str, now: datetime) -> dict[str, object]:
    return {"attempt_id": attempt_id, "lease_id": lease_id, "now": to_iso(now)}


class UnitOfWork:
    def __init__(self, database: Database,
                 on_commit: Callable[[int, str], None] | None = None) -> None:
        self._database = database
        self._transaction: Transaction | None = None
        self._on_commit = on_commit  # told the event head after a commit that appended

    def __enter__(self) -> UnitOfWork:
        transaction = self._database.begin()
        self._transaction = transaction
        self.touched: dict[str, set[str]] = {name: set() for name in SEALED}  # updated ids
        self.inserted: dict[str, dict[str, str]] = {name: {} for name in SEALED}  # id -> seal
        self.tasks = self._repository(task_rows.TASKS)
        self.sessions = self._repository(task_rows.SESSIONS)
        self.messages = self._repository(task_rows.MESSAGES)
        self.runs = self._repository(run_rows.RUNS)
        self.attempts = self._repository(run_rows.ATTEMPTS)
        self.steps = self._repository(run_rows.STEPS)
        self.tool_calls = self._repository(run_rows.TOOL_CALLS)
        self.artifacts = self._repository(run_rows.ARTIFACTS)
        self.patches = self._repository(evidence_rows.PATCHES)
        self.verifications = self._repository(evidence_rows.VERIFICATIONS)
        self.judgements = self._repository(evidence_rows.JUDGEMENTS)
        self.verdicts = self._repository(evidence_rows.VERDICTS)
        self.approvals = self._repository(evidence_rows.APPROVALS)
        self.pull_requests = self._repository(evidence_rows.PULL_REQUESTS)
        self.events = EventLog(transaction)
        return self

    def _repository(self, mapping: RowMapping[R]) -> Repository[R]:
        return Repository(self.transaction, SHAPES[mapping.table], mapping,
                          self.touched[mapping.table], self.inserted[mapping.table])

    @property
    def transaction(self) -> Transaction:
        assert self._transaction is not None, "use the unit of work in a with-block"
        return self._transaction

    def write_pending(self, pending: Pending) -> None:
        """Insert what `pending` holds (steps, tool calls, artifacts) and append its events."""
        if not isinstance(pending, PendingRows):
            raise TypeError(f"{type(pending).__name__} holds writes for another store")
        self.steps.add_rows(SHAPES["step"].columns, pending.steps)
        self.tool_calls.add_rows(SHAPES["tool_call"].columns, pending.tool_calls)
        self.artifacts.add_rows(SHAPES["artifact"].columns, pending.artifacts)
        self.events.append_stored(pending.first_event, pending.events)

    def fence(self, attempt_id: str, lease_id: str, now: datetime) -> None:
        """Refuse the transaction unless this attempt still holds the run's unexpired lease.

        An UPDATE rather than a SELECT, so the check takes the row lock on databases that have
        them and a reaper expiring the lease concurrently is ordered before or after us.
        """
        result = run_named(self.transaction, "fence", _held(attempt_id, lease_id, now))
        if result.rowcount != 1:
            raise LeaseLost(f"attempt {attempt_id} no longer holds lease {lease_id}; write refused")

    def extend_lease(self, attempt_id: str, lease_id: str, now: datetime, until: datetime) -> bool:
        """A heartbeat: push the expiry forward, only while the lease is still held."""
        result = run_named(self.transaction, "extend", {**_held(attempt_id, lease_id, now),
                                                        "beat": to_iso(now),
                                                        "until": to_iso(until)})
        return result.rowcount == 1

    def next_queued_run(self, now: datetime) -> Run | None:
        """The oldest queued run whose backoff has passed and that no other claimer holds,
        locked until this transaction ends: concurrent workers each get a different one."""
        found = self.runs.claim(named("next_queued", self.transaction.dialect),
                                {"now": to_iso(now)})
        return found[0] if found else None

    def expired_attempts(self, now: datetime, *, limit: int | None = None) -> list[Attempt]:
        """Live attempts whose lease ran out (their worker died or hangs), locked; those another
        worker is reclaiming right now are skipped."""
        dialect = self.transaction.dialect
        if limit is None:
            return self.attempts.claim(named("expired", dialect), {"now": to_iso(now)})
        return self.attempts.claim(named("expired_up_to", dialect),
                                   {"now": to_iso(now), "limit": limit})

    def record_directory(self, attempt_id: str, directory: str) -> None:
        """Whose directory this is: what the sweep of a dead attempt's leftovers goes by."""
        run_named(self.transaction, "record_directory", {"id": attempt_id, "directory": directory})

    def directories(self, attempt_ids: list[str]) -> list[str]:
        """The recorded directories of these attempts."""
        if not attempt_ids:
            return []
        query = listing("directories", "ids", self.transaction.dialect, len(attempt_ids))
        found = run(self.transaction, query, listed("ids", attempt_ids))
        return [str(directory) for (directory,) in found.rows]

    def wake_workers(self) -> None:
        """A hint to idle workers that a run was queued, sent when this transaction commits
        (PostgreSQL NOTIFY); workers poll anyway, so nothing depends on it arriving."""
        if self.transaction.dialect == "postgresql":
            cursor = self.transaction.cursor()
            try:
                cursor.execute("SELECT pg_notify(%(channel)s, '')", {"channel": WAKE_CHANNEL})
            finally:
                cursor.close()

    def unfinished_runs(self, task_id: str, *, besides: str) -> int:
        found = run_named(self.transaction, "unfinished_runs",
                          {"task_id": task_id, "besides": besides})
        return int(found.scalar() or 0)

    def run_status(self, run_id: str) -> RunStatus:
        """Just the status: moving a run along does not need its whole spec decoded."""
        status = run_named(self.transaction, "status:run", {"key": run_id}).scalar()
        if status is None:
            raise NotFound(f"no run {run_id}")
        return RunStatus(status)

    def task_status(self, task_id: str) -> TaskStatus:
        status = run_named(self.transaction, "status:task", {"key": task_id}).scalar()
        if status is None:
            raise NotFound(f"no task {task_id}")
        return TaskStatus(status)

    def set_run_status(self, run_id: str, *, expected: RunStatus, target: RunStatus) -> None:
        """Compare-and-set of a run's status (the transition rule was checked by the caller)."""
        result = run_named(self.transaction, "set_run_status",
                           {"id": run_id, "expected": expected.value, "target": target.value})
        if result.rowcount != 1:
            raise IllegalTransition("run", expected.value, target.value,
                                    f"{run_id} changed concurrently")
        self.touched["run"].add(run_id)

    def next_run_number(self, task_id: str) -> int:
        found = run_named(self.transaction, "last_run_number", {"task_id": task_id})
        return int(found.scalar() or 0) + 1

    def _seal(self) -> None:
        """Every row this transaction wrote, sealed into its first event: inserted rows from
        the values inserted, updated ones read back as they now are."""
        sealed = {name: dict(rows) for name, rows in self.inserted.items() if rows}
        touched = {name: keys for name, keys in self.touched.items() if keys}
        for name, rows in seal_rows(self.transaction, touched).items():
            sealed.setdefault(name, {}).update(rows)
        attempts = self.touched["attempt"] | self.inserted["attempt"].keys()
        lease = lease_seals(self.transaction, attempts) if attempts else None
        if lease:
            sealed[LEASE_SEAL] = lease
        if sealed:
            self.events.seal(sealed)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        transaction = self.transaction
        try:
            if exc_type is None:
                self._seal()
                self.events.flush_head()
                transaction.commit()
                if self._on_commit is not None and self.events.appended is not None:
                    self._on_commit(*self.events.appended)
            else:
                transaction.rollback()
        finally:
            transaction.close()
            self._transaction = None
