"""Many writers at once, on SQLite and PostgreSQL: appends keep one unbroken hash chain, and
concurrent claims lease every queued run exactly once."""

from __future__ import annotations

import sqlite3
import sqlite3.dbapi2
import threading
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentctl.config import load
from agentctl.domain import ids
from agentctl.domain.clock import utcnow
from agentctl.domain.enums import (
    AutonomyLevel,
    EventType,
    TaskSource,
    TaskStatus,
    TaskType,
    ToolDecision,
    ToolOutcome,
)
from agentctl.domain.events import NewEvent, find_chain_breaks
from agentctl.domain.step import ToolResult
from agentctl.domain.task import Task
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.home import Home, resolve_home
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_task
from agentctl.services.lifecycle.ledger import Ledger
from agentctl.services.lifecycle.runs import create_run, lease_run
from agentctl.services.ports import CallRequest
from agentctl.store.audit import verify_store
from agentctl.store.busy import BUSY_TIMEOUT_SECONDS
from agentctl.store.revision import HEAD
from agentctl.store.storage import Store
from agentctl.store.transactions import close_all, prepare_connection
from agentctl.store.views import Views

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def together(count: int, work: object) -> list[BaseException]:
    """Run `work(i)` in `count` threads started at once; the errors they raised."""
    start = threading.Barrier(count)
    errors: list[BaseException] = []

    def each(index: int) -> None:
        start.wait()
        try:
            work(index)  # type: ignore[operator]
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    threads = [threading.Thread(target=each, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return errors


def new_task() -> Task:
    return Task(task_id=ids.new_id("task"), source=TaskSource.CLI, created_by="alice",
                task_type=TaskType.BUG_FIX, title="t", instruction="t", repository="/srv/r",
                base_ref="main", autonomy_level=AutonomyLevel.DRY_RUN,
                status=TaskStatus.READY_FOR_RUN, created_at=T0, updated_at=T0)


def test_concurrent_appends_keep_one_order_and_an_unbroken_chain(store_home: Home) -> None:
    writers, rounds = 6, 25

    def append(index: int) -> None:
        store = Store(store_home)
        for number in range(rounds):
            task = new_task()
            with store.unit_of_work() as uow:
                uow.tasks.add(task)
                uow.events.append(*(NewEvent(type=EventType.TASK_SUBMITTED, created_at=T0,
                                             task_id=task.task_id,
                                             payload={"writer": index, "n": number, "k": k})
                                    for k in range(3)))

    assert together(writers, append) == []
    with Views(store_home) as views:
        chain = list(views.event_chain())
        head = views.event_head()
        events = views.events()
    assert [row[0] for row in chain] == list(range(1, writers * rounds * 3 + 1))
    assert find_chain_breaks(chain, head) == []
    # each transaction's events are consecutive: nobody else's appends land in between
    by_task: dict[str, list[int]] = {}
    for event in events:
        by_task.setdefault(str(event["task_id"]), []).append(int(event["seq"]))
    assert all(seqs == list(range(seqs[0], seqs[0] + 3)) for seqs in by_task.values())


def test_concurrent_claims_lease_every_run_exactly_once(
        store_home: Home, repo: Path, tmp_path: Path) -> None:
    store = Store(store_home)
    settings = tmp_path / "agentctl.toml"
    settings.write_text("[budget]\nmax_attempts = 1\n")
    config = load(settings)
    task = submit_task(store, config, TaskRequest(repository=str(repo), task_type="bug_fix",
                                                  instruction="fix the greeting"), cwd=tmp_path)
    agent = parse_agent_spec("noop", tmp_path)
    queued = {create_run(store, config, task.task_id, agent=agent).run_id for _ in range(30)}
    leased: list[str] = []

    def claim(index: int) -> None:
        mine = Store(store_home)
        while (lease := lease_run(mine, worker_id=f"w{index}", ttl_seconds=300)) is not None:
            leased.append(lease.run_id)

    assert together(6, claim) == []
    assert Counter(leased) == Counter(queued)  # every run once, none twice
    with Views(store_home) as views:
        attempts = [a for run_id in queued for a in views.attempts(run_id)]
        chain = list(views.event_chain())
        head = views.event_head()
    assert len(attempts) == len(queued)
    assert find_chain_breaks(chain, head) == []


def test_audit_verify_beside_a_busy_writer_sees_each_record_with_its_event(
        store_home: Home, repo: Path, tmp_path: Path) -> None:
    """The audit reads the log, then the records: each commit of the writer in between would
    be a record no event vouches for, unless the audit reads one snapshot."""
    store = Store(store_home)
    (tmp_path / "agentctl.toml").write_text("")
    config = load(tmp_path / "agentctl.toml")
    task = submit_task(store, config, TaskRequest(repository=str(repo), task_type="bug_fix",
                                                  instruction="fix the greeting"), cwd=tmp_path)
    run = create_run(store, config, task.task_id, agent=parse_agent_spec("noop", tmp_path))
    lease = lease_run(store, worker_id="writer", ttl_seconds=300, run_id=run.run_id)
    assert lease is not None
    ledger = Ledger(Store(store_home), lease, spec_digest=run.spec_digest)
    result = ToolResult(outcome=ToolOutcome.OK, output="ok", exit_code=0)
    writing = threading.Event()
    writing.set()

    def write() -> None:
        try:
            for index in range(300):
                ledger.finished_call(CallRequest(
                    tool="fs.write", arguments_json=f'{{"path": "f{index}"}}',
                    decision=ToolDecision.ALLOWED, matched_rule="workspace", denial_reason=None,
                    requested_at=utcnow()), result)
                ledger.flush()  # a commit per call: as many chances to land mid-audit
        finally:
            writing.clear()

    writer = threading.Thread(target=write)
    writer.start()
    reports = []
    while writing.is_set() or not reports:
        reports.append(verify_store(Store(store_home)))
    writer.join()
    after = verify_store(Store(store_home))
    assert [report.failure() for report in [*reports, after] if not report.ok] == []
    assert after.records >= 300  # what the writer wrote is what the audits read


def test_connections_opening_a_new_database_at_once_all_get_in(tmp_path: Path) -> None:
    """Each new connection switches the journal to WAL, which needs the lock every other
    opener's read holds; SQLite refuses its busy handler there, so the switch must wait in our
    loop. Eight connections at a time to new databases, many times over: none is refused."""
    refused: list[BaseException] = []
    for round_ in range(40):
        path = tmp_path / f"new-{round_}.db"
        start = threading.Barrier(8)

        def open_and_prepare(path: Path, start: threading.Barrier) -> None:
            connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS,
                                         check_same_thread=False)
            start.wait()
            try:
                prepare_connection(connection)
            except sqlite3.OperationalError as error:
                refused.append(error)
            finally:
                connection.close()

        threads = [threading.Thread(target=open_and_prepare, args=(path, start))
                   for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert refused == []


class LockAtFirstRead:
    """Another connection holds the database's exclusive lock from the moment a new
    connection's first statement past its settings starts until that statement is tried again.

    A connection that has just switched a new database to WAL has not read it as WAL yet: its
    first read there meets, for a moment, the locks of another connection's WAL recovery, or
    of the last connection's cleanup as it closes, and a connection with no busy handler fails
    "database is locked" at once. The holder here is a real connection in exclusive locking
    mode: it refuses that read the same way, and for as long as the test needs, at the exact
    statement (SQLite's trace of each statement as it starts), not by a race."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connect = sqlite3.connect  # the real one: the holder's own connection is not traced
        self.seen: list[str] = []  # "held", then "released" when the statement came again
        self._first: str | None = None
        self._holder: sqlite3.Connection | None = None

    def connection(self, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        """`sqlite3.connect`, each connection made traced."""
        connection = self.connect(*args, **kwargs)
        connection.set_trace_callback(self._started)
        return connection

    def _started(self, statement: str) -> None:
        if statement.startswith("PRAGMA") or "released" in self.seen:
            return
        if self._first is None:
            self._first = statement
            holder = self.connect(self.path, timeout=0, isolation_level=None,
                                  check_same_thread=False)
            holder.execute("PRAGMA locking_mode=EXCLUSIVE")
            holder.execute("SELECT count(*) FROM sqlite_master")  # the lock, kept from now
            self._holder = holder
            self.seen.append("held")
        elif statement == self._first:
            self.release()
            self.seen.append("released")

    def release(self) -> None:
        if self._holder is not None:
            self._holder.close()
            self._holder = None


def _first_write(home: Home) -> None:
    with Store(home).unit_of_work() as uow:
        uow.tasks.add(new_task())


def _db_upgrade(home: Home) -> None:
    from agentctl.store.database import upgrade

    assert upgrade(Store(home)).to_revision == HEAD


@pytest.mark.parametrize("use", [_first_write, _db_upgrade], ids=["first-write", "db-upgrade"])
def test_a_new_databases_first_read_waits_for_a_lock_held_a_moment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use: Callable[[Home], None]) -> None:
    """The first store to open a new home switches its database to WAL, then reads its schema
    revision: that read waits, as BEGIN IMMEDIATE does, for a lock another connection holds a
    moment, instead of failing "database is locked" (CI, at load: another thread's connection
    was recovering the new WAL)."""
    home = resolve_home(str(tmp_path / "home"))
    assert home.sqlite_path is not None
    lock = LockAtFirstRead(home.sqlite_path)
    monkeypatch.setattr(sqlite3, "connect", lock.connection)
    monkeypatch.setattr(sqlite3.dbapi2, "connect", lock.connection)  # SQLAlchemy's import
    try:
        use(home)
    finally:
        lock.release()
        monkeypatch.undo()
        close_all()
    assert lock.seen == ["held", "released"]  # the read met the lock, and waited it out
    with Views(home) as views:
        assert views.table_names()  # the schema is there, at HEAD (Views refuses it behind)
