"""The read side: the queries of commands that only show things, decoded into records.

The statements are those of `queries.py` (Core `select()`s over `tables.py`), compiled ahead
for each dialect: read-only commands run them on the driver (stdlib sqlite3 for SQLite) without
importing SQLAlchemy, which would cost more than the command (benchmarks/bench_startup.py), and
decode rows with the same codec as the write path. Reads never migrate: a database that is
behind is refused with the command that upgrades it.

Record types beyond tasks and sessions are imported by the methods that need them, so that
`task list` pays for none of the run machinery.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from agentctl.domain import id_prefixes
from agentctl.domain.clock import to_iso
from agentctl.domain.errors import NotFound
from agentctl.home import Home
from agentctl.store.compiled_queries import SQL
from agentctl.store.revision import HEAD, SchemaBehind, stored_revision
from agentctl.store.rows import tasks as task_rows

if TYPE_CHECKING:
    from pathlib import Path

    from agentctl.domain.artifact import Artifact
    from agentctl.domain.enums import RunStatus, TaskStatus
    from agentctl.domain.judge import JudgeReport
    from agentctl.domain.patch import Patch
    from agentctl.domain.pull_request import PullRequest
    from agentctl.domain.run import Attempt, Run
    from agentctl.domain.step import Step, ToolCall
    from agentctl.domain.task import Session, SessionMessage, Task
    from agentctl.domain.verdict import Approval, Verdict
    from agentctl.domain.verification import VerificationReport
    from agentctl.services.ports import RunRecord
    from agentctl.services.unit_of_work import CallRow, StepRow
    from agentctl.services.unit_of_work import IdKind
from agentctl.domain.enums import RunStatus
from agentctl.domain.transitions import ACTIVE_RUN

R = TypeVar("R")
_LIVE = {"live_1": "STARTING", "live_2": "ACTIVE"}
"""The attempt statuses that hold a lease (`AttemptStatus`, checked by a test)."""
Row = Mapping[str, Any]
ChainRow = tuple[int, str, str | None, str | None, str | None, str | None, str, str, str, str]


class _Connection(Protocol):
    """The DB-API connection the views need: stdlib sqlite3, or psycopg's."""

    def cursor(self) -> Any: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


class Views:
    def __init__(self, home: Home, *, repository: str | None = None) -> None:
        """`repository`: where the person stands; "the newest run" then means its newest.
        SchemaBehind when the database is behind this agentctl's schema: reads never migrate."""
        self._connection, self._dialect = _connect(home)
        self._sql = SQL[self._dialect]
        self.repository = repository
        # a run's verification reports, read once per snapshot: the biggest record a run has
        # (one entry per test), and the tree, the verdict and the page each want it
        self._verifications: dict[str, list[VerificationReport]] | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()

    def __enter__(self) -> Views:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside sees the database as of one moment. Without it each query sees
        the latest commit: a check that reads the log and then the records would find a record
        whose event was committed in between, and call the trail broken."""
        if self._connection is None:
            yield
            return
        cursor = self._connection.cursor()
        if self._dialect == "sqlite":  # in WAL, a read transaction keeps its snapshot
            cursor.execute("BEGIN")
        else:  # PostgreSQL: READ COMMITTED would take a new snapshot per statement
            self._connection.rollback()  # the schema check's implicit transaction
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        self._verifications = {}  # nothing changes under a snapshot: what it read still holds
        try:
            yield
        finally:
            self._verifications = None
            self._connection.rollback()

    # --- plumbing: statements of `queries.py`, compiled ahead for this dialect ---------------
    def _execute(self, name: str, params: Mapping[str, object], *, named: bool) -> Any:
        """A cursor that ran statement `name`; rows by column name if `named`, else tuples."""
        assert self._connection is not None
        found = self._sql.get(name)
        if found is None:  # not compiled ahead (a table this agentctl does not know)
            from agentctl.store.queries import compile_one

            found = self._sql[name] = compile_one(name, self._dialect)
        sql, constants = found
        cursor = self._connection.cursor()
        if self._dialect == "sqlite" and not named:
            cursor.row_factory = None
        cursor.execute(sql, {**constants, **params})
        return cursor

    def _rows(self, name: str, **params: object) -> list[Row]:
        if self._connection is None:
            return []
        cursor = self._execute(name, params, named=True)
        if self._dialect == "sqlite":
            return cast("list[Row]", cursor.fetchall())
        names = [str(column[0]) for column in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _tuples(self, name: str, **params: object) -> list[tuple[Any, ...]]:
        """Rows as plain tuples in the order of the selected columns: for reads of many rows,
        without the per-row name lookup."""
        if self._connection is None:
            return []
        return [tuple(row) for row in self._execute(name, params, named=False).fetchall()]

    def _records(self, from_row: Callable[[Row], R], name: str, **params: object) -> list[R]:
        return [from_row(row) for row in self._rows(name, **params)]

    def table_names(self) -> list[str]:
        """The tables of the database as it is (a table a later schema added included)."""
        return sorted(str(row[0]) for row in self._tuples("table_names"))

    def everything(self, table: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """(column names as the database gives them, every row as a tuple) of `table`."""
        if self._connection is None:
            return [], []
        cursor = self._execute(f"everything:{table}", {}, named=False)
        names = [str(column[0]) for column in cursor.description or ()]
        return names, [tuple(row) for row in cursor.fetchall()]

    def all_rows(self, table: str) -> list[Row]:
        """Every row of a table this agentctl knows, by column name."""
        return self._rows(f"everything:{table}")

    def count(self, table: str) -> int:
        found = self._tuples(f"count:{table}")
        return int(found[0][0]) if found else 0

    def call_digest_rows(self) -> list[Row]:
        """The columns of every tool call that its digest covers (`audit verify`)."""
        return self._rows("call_digests")

    def run_statuses(self) -> dict[str, str]:
        return {str(run_id): str(status) for run_id, status in self._tuples("run_statuses")}

    def ended_attempt_directories(self, directories: Sequence[str]) -> list[str]:
        """Which of these directories were recorded by attempts that are no longer live (an
        indexed read each)."""
        return [str(row[0]) for directory in directories
                for row in self._tuples("ended_attempt_directory", directory=directory, **_LIVE)]

    def lease_due(self, now: datetime) -> bool:
        """Whether a live attempt's lease ran out by `now`."""
        return bool(self._tuples("lease_due", now=to_iso(now), **_LIVE))

    def attempt_span(self) -> tuple[str | None, str | None]:
        """When the first attempt started and the last ended."""
        found = self._tuples("attempt_span")
        return (found[0][0], found[0][1]) if found else (None, None)

    def step_tree_rows(self, run_id: str) -> list[StepRow]:
        """The columns of `run show --tree` of each step of a run, in attempt and step order."""
        from agentctl.services.unit_of_work import StepRow

        return [StepRow._make(row) for row in self._tuples("step_tree", run_id=run_id)]

    def call_tree_rows(self, run_id: str) -> list[CallRow]:
        """The columns of `run show --tree` of each tool call of a run."""
        from agentctl.services.unit_of_work import CallRow

        return [CallRow._make(row) for row in self._tuples("call_tree", run_id=run_id)]

    def resolve(self, kind: IdKind, text: str) -> str:
        low, high = id_prefixes.prefix_bounds(id_prefixes.full_prefix(kind, text))
        found = [str(row[0]) for row in self._tuples(f"resolve:{kind}", low=low, high=high)]
        return id_prefixes.pick_unique(kind, text, found)

    def short_ids(self, kind: IdKind, full: Sequence[str]) -> dict[str, str]:
        """Each id cut to the shortest prefix no other stored id of its kind shares (as git
        abbreviates hashes), one length for all so a column stays aligned."""
        needed = len(kind) + 1 + id_prefixes.MIN_PREFIX_CHARS
        for one in full:
            for side in ("below", "above"):
                found = self._tuples(f"{side}:{kind}", id=one)
                neighbour = found[0][0] if found else None
                if neighbour:
                    needed = max(needed, _shared(one, str(neighbour)) + 1)
        return {one: one[:needed] for one in full}

    def _one(self, from_row: Callable[[Row], R], name: str, missing: str, **params: object,
             ) -> R:
        found = self._records(from_row, name, **params)
        if not found:
            raise NotFound(missing)
        return found[0]

    # --- tasks and sessions -------------------------------------------------------------------
    def tasks(self, *, limit: int, status: TaskStatus | None = None,
              session_id: str | None = None, repository: str | None = None) -> list[Task]:
        given = _given(status=status.value if status else None, session_id=session_id,
                       repository=repository)
        return self._records(task_rows.task_from_row, f"tasks:{','.join(sorted(given))}",
                             **given, limit=limit)

    def task(self, text: str) -> Task:
        task_id = self.resolve("task", text)
        return self._one(task_rows.task_from_row, "task", f"no task {task_id}", task_id=task_id)

    def sessions(self, *, limit: int) -> list[Session]:
        return [self._with_tasks(s) for s in self._records(
            task_rows.session_from_row, "sessions", limit=limit)]

    def session(self, text: str) -> tuple[Session, list[SessionMessage]]:
        session_id = self.resolve("session", text)
        session = self._one(task_rows.session_from_row, "session", f"no session {session_id}",
                            session_id=session_id)
        messages = self._records(task_rows.session_message_from_row, "session_messages",
                                 session_id=session_id)
        return self._with_tasks(session), messages

    def _with_tasks(self, session: Session) -> Session:
        related = tuple(str(row[0]) for row in self._tuples(
            "session_tasks", session_id=session.session_id))
        return replace(session, related_tasks=related)

    # --- runs -------------------------------------------------------------------------------
    def runs(self, *, limit: int, task_id: str | None = None, status: RunStatus | None = None,
             repository: str | None = None) -> list[Run]:
        from agentctl.store.rows import runs as run_rows

        given = _given(task_id=task_id, status=status.value if status else None,
                       repository=repository)
        return self._records(run_rows.run_from_row, f"runs:{','.join(sorted(given))}", **given,
                             limit=limit)

    def run(self, text: str | None) -> Run:
        """A run by id prefix, or the newest run when `text` is None."""
        from agentctl.store.rows import runs as run_rows

        if text is None:
            newest = self.runs(limit=1, repository=self.repository)
            if newest:
                return newest[0]
            if self.repository is not None:
                raise NotFound(f"there are no runs of {self.repository} yet; start one with "
                               "'agentctl run start TASK', or name a run")
            raise NotFound("there are no runs yet; start one with 'agentctl run start TASK'")
        run_id = self.resolve("run", text)
        return self._one(run_rows.run_from_row, "run", f"no run {run_id}", run_id=run_id)

    def cancel_request(self, run_id: str) -> tuple[str, str] | None:
        """(who, why) when someone asked to cancel the run; a narrow read, polled often."""
        found = self._tuples("cancel_request", run_id=run_id)
        if not found or found[0][0] is None:
            return None
        return str(found[0][0]), str(found[0][1])

    def attempts(self, run_id: str) -> list[Attempt]:
        from agentctl.store.rows import runs as run_rows

        return self._records(run_rows.attempt_from_row, "attempts", run_id=run_id)

    def steps(self, run_id: str) -> list[Step]:
        from agentctl.store.rows import runs as run_rows

        return self._records(run_rows.step_from_row, "steps", run_id=run_id)

    def tool_calls(self, run_id: str) -> list[ToolCall]:
        from agentctl.store.rows import runs as run_rows

        return self._records(run_rows.tool_call_from_row, "tool_calls", run_id=run_id)

    def artifacts(self, run_id: str | None = None) -> list[Artifact]:
        from agentctl.store.rows import runs as run_rows

        if run_id is None:
            return self._records(run_rows.artifact_from_row, "all_artifacts")
        return self._records(run_rows.artifact_from_row, "artifacts", run_id=run_id)

    def artifact(self, text: str) -> Artifact:
        from agentctl.store.rows import runs as run_rows

        artifact_id = self.resolve("artifact", text)
        return self._one(run_rows.artifact_from_row, "artifact", f"no artifact {artifact_id}",
                         artifact_id=artifact_id)

    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]:
        """Each one an indexed read of its own: a verdict names a handful."""
        from agentctl.store.rows import runs as run_rows

        found = [artifact for one in dict.fromkeys(artifact_ids) for artifact in
                 self._records(run_rows.artifact_from_row, "artifact", artifact_id=one)]
        return {a.artifact_id: a for a in found}

    def patches(self, run_id: str) -> list[Patch]:
        from agentctl.store.rows import evidence as evidence_rows

        return self._records(evidence_rows.patch_from_row, "patches", run_id=run_id)

    def patch(self, run_id: str) -> Patch | None:
        return _last(self.patches(run_id))

    def verifications(self, run_id: str) -> list[VerificationReport]:
        from agentctl.store.rows import evidence as evidence_rows

        held = self._verifications
        if held is not None and run_id in held:
            return list(held[run_id])
        found = self._records(evidence_rows.verification_report_from_row, "verifications",
                              run_id=run_id)
        if held is not None:
            held[run_id] = found
        return list(found)

    def verification(self, run_id: str) -> VerificationReport | None:
        return _last(self.verifications(run_id))

    def judgements(self, run_id: str) -> list[JudgeReport]:
        from agentctl.store.rows import evidence as evidence_rows

        return self._records(evidence_rows.judge_report_from_row, "judgements", run_id=run_id)

    def judgement(self, run_id: str) -> JudgeReport | None:
        return _last(self.judgements(run_id))

    def verdict(self, run_id: str) -> Verdict | None:
        from agentctl.store.rows import evidence as evidence_rows

        return _last(self._records(evidence_rows.verdict_from_row, "verdicts", run_id=run_id))

    def approvals(self, run_id: str) -> list[Approval]:
        from agentctl.store.rows import evidence as evidence_rows

        return self._records(evidence_rows.approval_from_row, "approvals", run_id=run_id)

    def pull_requests(self, run_id: str) -> list[PullRequest]:
        from agentctl.store.rows import evidence as evidence_rows

        return self._records(evidence_rows.pull_request_from_row, "pull_requests", run_id=run_id)

    def repositories(self, task_ids: Sequence[str]) -> dict[str, str | None]:
        """The repository of each task, for listings that show where a run worked (an indexed
        read each: a listing names a page of them)."""
        return {task_id: row[0] for task_id in dict.fromkeys(task_ids)
                for row in self._tuples("task_repository", task_id=task_id)}

    def run_summaries(self, run_ids: Sequence[str]) -> dict[str, Row]:
        """Verdict status and eligibility per run, for listings."""
        return {run_id: row for run_id in dict.fromkeys(run_ids)
                for row in self._rows("run_summary", run_id=run_id)}

    # --- events -----------------------------------------------------------------------------
    def events(self, *, run_id: str | None = None, task_id: str | None = None,
               after_seq: int = 0, limit: int | None = None) -> list[Row]:
        given = _given(run_id=run_id, task_id=task_id, limit=limit)
        return self._rows(f"events:{','.join(sorted(given))}", **given, after_seq=after_seq)

    def event_chain(self) -> Iterator[ChainRow]:
        """Every event as the tuple `find_chain_breaks` checks, in order, streamed."""
        if self._connection is None:
            return iter(())
        return (tuple(row) for row in self._execute("event_chain", {}, named=False))

    def event_head(self) -> tuple[int, str] | None:
        found = self._tuples("event_head")
        return (int(found[0][0]), str(found[0][1])) if found else None

    # --- the storage port's reads (services.unit_of_work.Reads) --------------------------------
    def waiting(self) -> bool:
        """Queued runs, or runs a worker holds (they may come back to the queue)."""

        return any(self.runs(limit=1, status=status)
                   for status in (RunStatus.QUEUED, *ACTIVE_RUN))

    def record(self, run_id: str) -> RunRecord:
        """Everything stored about one run, as typed records."""
        from agentctl.services.ports import RunRecord
        from agentctl.store.rows.runs import event_from_row

        return RunRecord(
            run=self.run(run_id), attempts=tuple(self.attempts(run_id)),
            steps=tuple(self.steps(run_id)), tool_calls=tuple(self.tool_calls(run_id)),
            artifacts=tuple(self.artifacts(run_id)), verdict=self.verdict(run_id),
            patches=tuple(self.patches(run_id)),
            verifications=tuple(self.verifications(run_id)),
            judgements=tuple(self.judgements(run_id)),
            events=tuple(event_from_row(row) for row in self.events(run_id=run_id)),
        )


def _given(**filters: object) -> dict[str, object]:
    """The filters that were given: each picks the statement variant that has its clause."""
    return {name: value for name, value in filters.items() if value is not None}


def _shared(a: str, b: str) -> int:
    """How many leading characters `a` and `b` have in common."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _last(items: list[R]) -> R | None:
    return items[-1] if items else None


def _connect(home: Home) -> tuple[_Connection | None, str]:
    """A read connection to a database at the schema this agentctl needs, and its dialect.
    None when there is no database yet (nothing to read). A database that is behind is never
    migrated here, where a read could fail as a write: SchemaBehind names the command that does
    (writes bring the home's own SQLite database up to date on their first use as before)."""
    connection, dialect = _open(home)
    if connection is None or home.database_url in _CURRENT:
        return connection, dialect
    cursor = connection.cursor()
    try:
        current = stored_revision(cursor, dialect)
        empty = current is None and not _has_tables(cursor, dialect)
    finally:
        cursor.close()
    if current == HEAD:
        _CURRENT.add(home.database_url)
        return connection, dialect
    connection.close()
    if empty:  # a shared database nothing has written to yet
        return None, dialect
    where = f"is at schema revision {current}" if current else "predates schema revisions"
    raise SchemaBehind(f"the database {where}, this agentctl needs {HEAD}: "
                       "run 'agentctl db upgrade'")


_CURRENT: set[str] = set()
_IOERR = 10  # SQLITE_IOERR, the primary code of every I/O error
"""Databases this process found at HEAD already: a worker's frequent reads check once."""


def _has_tables(cursor: Any, dialect: str) -> bool:
    sql, constants = SQL[dialect]["table_names"]
    cursor.execute(sql, constants)
    return cursor.fetchone() is not None


def _open(home: Home) -> tuple[_Connection | None, str]:
    path = home.sqlite_path
    if path is not None:
        if not path.exists():
            return None, "sqlite"
        connection = _read_only(path)
        connection.row_factory = sqlite3.Row
        return connection, "sqlite"
    from agentctl.store.engine import engine_for, reconnecting  # another database: via SQLAlchemy

    engine = engine_for(home.database_url)
    return reconnecting(engine, engine.raw_connection), engine.dialect.name


def _read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file. Its first read maps the WAL's shared index
    (`-shm`), which a full disk refuses (a disk I/O error, where reads should still work): then
    the file is read as immutable, without that index, when its WAL holds nothing (every commit
    is in the file, as when no writer has it open); with the disk full, no writer adds one."""
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        connection.execute("PRAGMA schema_version").fetchone()
        return connection
    except sqlite3.OperationalError as error:
        connection.close()
        if error.sqlite_errorcode & 0xFF != _IOERR or _wal_bytes(path):
            raise
    return sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)


def _wal_bytes(path: Path) -> int:
    """The size of the database's write-ahead log; 0 when there is none."""
    try:
        return (path.parent / f"{path.name}-wal").stat().st_size
    except FileNotFoundError:
        return 0
