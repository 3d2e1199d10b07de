"""The store on a throw-away SQLite file and a PostgreSQL database: the unit of work, the event
chain, id prefixes; WAL on SQLite."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentctl.domain import ids
from agentctl.domain.enums import (
    AutonomyLevel,
    EventType,
    MessageRole,
    RunStatus,
    SessionStatus,
    TaskSource,
    TaskStatus,
    TaskType,
)
from agentctl.domain.errors import AmbiguousId, BadInput, IllegalTransition, NotFound
from agentctl.domain.events import NewEvent, find_chain_breaks
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.home import Home, resolve_home
from agentctl.store.storage import Store
from agentctl.store.views import Views

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture
def home(store_home: Home) -> Home:
    return store_home


@pytest.fixture
def sqlite_home(tmp_path: Path) -> Home:
    return resolve_home(str(tmp_path / "home"))


@pytest.fixture
def store(home: Home) -> Store:
    return Store(home)


def new_task(**overrides: object) -> Task:
    fields: dict[str, object] = dict(
        task_id=ids.new_id("task"), source=TaskSource.CLI, created_by="alice",
        task_type=TaskType.BUG_FIX, title="Fix it", instruction="Fix it",
        repository="/srv/repo", base_ref="main", autonomy_level=AutonomyLevel.DRY_RUN,
        status=TaskStatus.READY_FOR_RUN, created_at=T0, updated_at=T0, labels={"k": "v"},
        allowed_paths=("src/**",),
    )
    fields.update(overrides)
    return Task(**fields)  # type: ignore[arg-type]


def new_session() -> Session:
    return Session(session_id=ids.new_id("session"), owner="alice", source=TaskSource.CLI,
                   title="chat", status=SessionStatus.OPEN, created_at=T0, last_activity_at=T0)


def event(task: Task, kind: EventType = EventType.TASK_SUBMITTED) -> NewEvent:
    return NewEvent(type=kind, created_at=T0, task_id=task.task_id, payload={"x": 1})


def count(home: Home, table: str) -> int:
    with Views(home) as views:
        return views.count(table)


def test_database_is_sqlite_in_wal_mode_under_the_home(sqlite_home: Home) -> None:
    home = sqlite_home
    with Store(home).unit_of_work() as uow:
        uow.tasks.add(new_task())
    assert home.sqlite_path == home.root / "agentctl.db"
    with sqlite3.connect(home.sqlite_path) as connection:  # type: ignore[arg-type]
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_opening_the_store_twice_keeps_the_data(home: Home, store: Store) -> None:
    task = new_task()
    with store.unit_of_work() as uow:
        uow.tasks.add(task)
    with Store(home).unit_of_work() as uow:
        assert uow.tasks.get(task.task_id) == task


def test_unit_of_work_commits_records_and_events_together(home: Home, store: Store) -> None:
    task = new_task()
    with store.unit_of_work() as uow:
        uow.tasks.add(task)
        uow.events.append(event(task), event(task, EventType.TASK_ACCEPTED))
    assert (count(home, "task"), count(home, "event")) == (1, 2)


def test_unit_of_work_that_raises_writes_nothing(home: Home, store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.tasks.add(new_task())
        uow.events.append(event(new_task()))
    with pytest.raises(RuntimeError), store.unit_of_work() as uow:
        task = new_task()
        uow.tasks.add(task)
        uow.events.append(event(task))
        raise RuntimeError("boom")
    assert (count(home, "task"), count(home, "event")) == (1, 1)
    with Views(home) as views:
        assert find_chain_breaks(list(views.event_chain()), views.event_head()) == []


def test_events_form_an_intact_chain_across_units_of_work(home: Home, store: Store) -> None:
    for _ in range(3):
        task = new_task()
        with store.unit_of_work() as uow:
            uow.tasks.add(task)
            uow.events.append(event(task), event(task, EventType.TASK_ACCEPTED))
    with Views(home) as views:
        rows = list(views.event_chain())
        head = views.event_head()
    assert [row[0] for row in rows] == [1, 2, 3, 4, 5, 6]
    assert head == (6, rows[-1][-1])
    assert find_chain_breaks(rows, head) == []


def test_task_round_trips_and_status_update_is_compare_and_set(store: Store) -> None:
    task = new_task()
    with store.unit_of_work() as uow:
        uow.tasks.add(task)
    cancelled = task.with_status(TaskStatus.CANCELLED, T0 + timedelta(1), "no longer needed")
    with store.unit_of_work() as uow:
        uow.tasks.save(cancelled, expected_status=TaskStatus.READY_FOR_RUN)
    with store.unit_of_work() as uow:
        assert uow.tasks.get(task.task_id) == cancelled
    with pytest.raises(IllegalTransition, match="CANCELLED"), store.unit_of_work() as uow:
        uow.tasks.save(cancelled, expected_status=TaskStatus.READY_FOR_RUN)


def test_session_and_message_round_trip(store: Store) -> None:
    session = new_session()
    message = SessionMessage(message_id=ids.new_id("message"), session_id=session.session_id,
                             role=MessageRole.USER, content="Upgrade Jackson.", created_at=T0,
                             metadata={"via": "cli"})
    with store.unit_of_work() as uow:
        uow.sessions.add(session)
        uow.messages.add(message)
    with store.unit_of_work() as uow:
        assert uow.sessions.get(session.session_id) == session
        assert uow.messages.get(message.message_id) == message


def test_session_update_is_stored(store: Store) -> None:
    session = new_session()
    with store.unit_of_work() as uow:
        uow.sessions.add(session)
    later = replace(session, last_activity_at=T0 + timedelta(hours=1))
    with store.unit_of_work() as uow:
        uow.sessions.save(later)
    with store.unit_of_work() as uow:
        assert uow.sessions.get(session.session_id).last_activity_at == later.last_activity_at


def test_id_prefixes_resolve_like_git_hash_prefixes(home: Home, store: Store) -> None:
    first = new_task(task_id="task_01AAAAAAAAAAAAAAAAAAAAAAAA")
    second = new_task(task_id="task_01AAAAAAAAAAAAAAAAAAAAAAAB")
    third = new_task(task_id="task_01BBBBBBBBBBBBBBBBBBBBBBBB")
    with store.unit_of_work() as uow:
        uow.tasks.add_many([first, second, third])
    with Views(home) as views:
        for resolve in (lambda text: store.resolve("task", text),
                        lambda text: views.resolve("task", text)):
            assert resolve("01BB") == third.task_id
            assert resolve("01bb") == third.task_id
            assert resolve("task_01BB") == third.task_id
            assert resolve(first.task_id) == first.task_id
            assert resolve("01AAAAAAAAAAAAAAAAAAAAAAAB") == second.task_id
            with pytest.raises(AmbiguousId, match="ambiguous"):
                resolve("01AA")
            with pytest.raises(NotFound, match="no task matches '01CC'"):
                resolve("01CC")
            with pytest.raises(BadInput, match="not a task id"):
                resolve("run_01AA")
            with pytest.raises(BadInput, match="too short"):
                resolve("01B")
            with pytest.raises(BadInput, match="empty task id"):
                resolve("  ")


def test_views_on_a_home_without_a_database_show_nothing_and_create_nothing(
        sqlite_home: Home) -> None:
    home = sqlite_home
    with Views(home) as views:
        assert views.tasks(limit=10) == []
        assert list(views.event_chain()) == []
        with pytest.raises(NotFound):
            views.task("01AA")
    assert not home.root.exists()


def test_a_lower_case_prefix_with_its_kind_resolves_too(home: Home, store: Store) -> None:
    task = new_task(task_id="task_01CCCCCCCCCCCCCCCCCCCCCCCC")
    with store.unit_of_work() as uow:
        uow.tasks.add(task)
    with Views(home) as views:
        assert views.resolve("task", "task_01ccc") == task.task_id


def test_views_filter_tasks_and_runs_by_their_status_enums(home: Home, store: Store) -> None:
    ready = new_task()
    draft = new_task(status=TaskStatus.DRAFT)
    with store.unit_of_work() as uow:
        uow.tasks.add_many([ready, draft])
    with Views(home) as views:
        assert [t.task_id for t in views.tasks(limit=10, status=TaskStatus.DRAFT)] == [draft.task_id]
        assert [t.task_id for t in views.tasks(limit=10, status=TaskStatus.READY_FOR_RUN)] == [
            ready.task_id]
        assert views.tasks(limit=10, status=TaskStatus.ACCEPTED) == []
        assert views.runs(limit=10, status=RunStatus.QUEUED) == []
