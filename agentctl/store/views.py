"""The read side: lean queries for commands that only show things.

Record types beyond tasks and sessions are imported by the methods that need them, so that
`task list` pays for none of the run machinery.

Read-only commands must start fast, so this module uses the DB-API driver directly (stdlib
sqlite3 for SQLite) instead of the ORM, and decodes rows with the same codec as the write path.
The SQL is plain and portable: `?` placeholders are rewritten for drivers that want `%s`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from agentctl.domain.errors import NotFound
from agentctl.store import ids
from agentctl.store.location import Home
from agentctl.store.revision import HEAD, stored_revision
from agentctl.store.rows import tasks as task_rows

if TYPE_CHECKING:
    from agentctl.domain.artifact import Artifact
    from agentctl.domain.judge import JudgeReport
    from agentctl.domain.patch import Patch
    from agentctl.domain.pull_request import PullRequest
    from agentctl.domain.run import Attempt, Run
    from agentctl.domain.step import Step, ToolCall
    from agentctl.domain.task import Session, SessionMessage, Task
    from agentctl.domain.verdict import Approval, Verdict
    from agentctl.domain.verification import VerificationReport
    from agentctl.services.ports import RunRecord

R = TypeVar("R")
Row = Mapping[str, Any]
ChainRow = tuple[int, str, str | None, str | None, str | None, str | None, str, str, str, str]

_KEYS = {"task": "task_id", "session": "session_id", "run": "run_id", "artifact": "artifact_id",
         "attempt": "attempt_id", "step": "step_id", "verdict": "verdict_id"}


class _Cursor(Protocol):
    description: Sequence[Sequence[object]] | None

    def execute(self, sql: str, params: Sequence[object] = ..., /) -> object: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class _Connection(Protocol):
    """The DB-API connection the views need: stdlib sqlite3, or another driver's."""

    def cursor(self) -> Any: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


class Views:
    def __init__(self, home: Home, *, repository: str | None = None) -> None:
        """`repository`: where the person stands; "the newest run" then means its newest."""
        self._connection, self._paramstyle = _connect(home)
        self.repository = repository

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
        if self._paramstyle == "qmark":  # SQLite in WAL: a read transaction keeps its snapshot
            cursor.execute("BEGIN")
        else:  # PostgreSQL: READ COMMITTED would take a new snapshot per statement
            self._connection.rollback()  # the schema check's implicit transaction
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        try:
            yield
        finally:
            self._connection.rollback()

    # --- plumbing ---------------------------------------------------------------------------
    def rows(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        if self._connection is None:
            return []
        if self._paramstyle != "qmark":
            sql = sql.replace("?", "%s")
        cursor: _Cursor = self._connection.cursor()
        cursor.execute(sql, tuple(params))
        if self._paramstyle == "qmark":
            return cursor.fetchall()
        names = [str(column[0]) for column in cursor.description or ()]
        return [dict(zip(names, row, strict=False)) for row in cursor.fetchall()]

    def tuples(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Rows as plain tuples in the order of the selected columns: for reads of many rows
        that name their columns, without the per-row name lookup."""
        if self._connection is None:
            return []
        if self._paramstyle != "qmark":
            sql = sql.replace("?", "%s")
        cursor = self._connection.cursor()
        if self._paramstyle == "qmark":
            cursor.row_factory = None
        cursor.execute(sql, tuple(params))
        return [tuple(row) for row in cursor.fetchall()] if self._paramstyle != "qmark" \
            else cursor.fetchall()

    def table_names(self) -> list[str]:
        """The tables of the database as it is (a table a later schema added included)."""
        if self._paramstyle == "qmark":
            sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        else:
            sql = ("SELECT table_name FROM information_schema.tables "
                   "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
        return sorted(str(row[0]) for row in self.tuples(sql))

    def described(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """(column names, rows as tuples) of a query that selects `*`."""
        if self._connection is None:
            return [], []
        cursor = self._connection.cursor()
        if self._paramstyle == "qmark":
            cursor.row_factory = None
        cursor.execute(sql)
        names = [str(column[0]) for column in cursor.description or ()]
        return names, [tuple(row) for row in cursor.fetchall()]

    def records(self, from_row: Callable[[Row], R], sql: str, params: Sequence[object] = (),
                ) -> list[R]:
        return [from_row(row) for row in self.rows(sql, params)]

    def resolve(self, kind: str, text: str) -> str:
        table, key = ("tool_call" if kind == "toolcall" else kind), _KEYS.get(kind, f"{kind}_id")
        prefix = ids.full_prefix(kind, text)
        low, high = ids.prefix_bounds(prefix)
        found = [str(r[key]) for r in self.rows(
            f"SELECT {key} FROM {table} WHERE {key} >= ? AND {key} < ? ORDER BY {key} LIMIT 4",
            (low, high))]
        return ids.pick_unique(kind, text, found)

    def short_ids(self, kind: str, full: Sequence[str]) -> dict[str, str]:
        """Each id cut to the shortest prefix no other stored id of its kind shares (as git
        abbreviates hashes), one length for all so a column stays aligned."""
        table, key = ("tool_call" if kind == "toolcall" else kind), _KEYS.get(kind, f"{kind}_id")
        needed = len(kind) + 1 + ids.MIN_PREFIX_CHARS
        for one in full:
            for sql in (f"SELECT max({key}) FROM {table} WHERE {key} < ?",
                        f"SELECT min({key}) FROM {table} WHERE {key} > ?"):
                found = self.tuples(sql, (one,))
                neighbour = found[0][0] if found else None
                if neighbour:
                    needed = max(needed, _shared(one, str(neighbour)) + 1)
        return {one: one[:needed] for one in full}

    def _one(self, from_row: Callable[[Row], R], sql: str, params: Sequence[object],
             missing: str) -> R:
        found = self.records(from_row, sql, params)
        if not found:
            raise NotFound(missing)
        return found[0]

    # --- tasks and sessions -------------------------------------------------------------------
    def tasks(self, *, limit: int, status: str | None = None, session_id: str | None = None,
              repository: str | None = None) -> list[Task]:
        where, params = _filters(status=status, session_id=session_id, repository=repository)
        return self.records(task_rows.task_from_row,
                            f"SELECT * FROM task{where} ORDER BY task_id DESC LIMIT ?",
                            [*params, limit])

    def task(self, text: str) -> Task:
        task_id = self.resolve("task", text)
        return self._one(task_rows.task_from_row, "SELECT * FROM task WHERE task_id = ?", (task_id,),
                         f"no task {task_id}")

    def sessions(self, *, limit: int) -> list[Session]:
        return [self._with_tasks(s) for s in self.records(
            task_rows.session_from_row, "SELECT * FROM session ORDER BY session_id DESC LIMIT ?",
            (limit,))]

    def session(self, text: str) -> tuple[Session, list[SessionMessage]]:
        session_id = self.resolve("session", text)
        session = self._one(task_rows.session_from_row, "SELECT * FROM session WHERE session_id = ?",
                            (session_id,), f"no session {session_id}")
        messages = self.records(task_rows.session_message_from_row, "SELECT * FROM session_message "
                                "WHERE session_id = ? ORDER BY message_id", (session_id,))
        return self._with_tasks(session), messages

    def _with_tasks(self, session: Session) -> Session:
        related = tuple(str(r["task_id"]) for r in self.rows(
            "SELECT task_id FROM task WHERE session_id = ? ORDER BY task_id",
            (session.session_id,)))
        return replace(session, related_tasks=related)

    # --- runs -------------------------------------------------------------------------------
    def runs(self, *, limit: int, task_id: str | None = None, status: str | None = None,
             repository: str | None = None) -> list[Run]:
        from agentctl.store.rows import runs as run_rows

        where, params = _filters(task_id=task_id, status=status)
        if repository is not None:
            where += (" AND" if where else " WHERE") + \
                " task_id IN (SELECT task_id FROM task WHERE repository = ?)"
            params.append(repository)
        return self.records(run_rows.run_from_row,
                            f"SELECT * FROM run{where} ORDER BY run_id DESC LIMIT ?",
                            [*params, limit])

    def run(self, text: str | None) -> Run:
        """A run by id prefix, or the newest run when `text` is None."""
        from agentctl.store.rows import runs as run_rows

        if text is None:
            if self.repository is not None:
                newest = self.runs(limit=1, repository=self.repository)
                if not newest:
                    raise NotFound(f"there are no runs of {self.repository} yet; start one with "
                                   "'agentctl run start TASK', or name a run")
                return newest[0]
            newest = self.records(run_rows.run_from_row,
                                  "SELECT * FROM run ORDER BY run_id DESC LIMIT 1")
            if not newest:
                raise NotFound("there are no runs yet; start one with 'agentctl run start TASK'")
            return newest[0]
        run_id = self.resolve("run", text)
        return self._one(run_rows.run_from_row, "SELECT * FROM run WHERE run_id = ?", (run_id,),
                         f"no run {run_id}")

    def cancel_request(self, run_id: str) -> tuple[str, str] | None:
        """(who, why) when someone asked to cancel the run; a narrow read, polled often."""
        found = self.rows("SELECT cancel_requested_by, cancel_reason FROM run WHERE run_id = ?",
                          (run_id,))
        if not found or found[0]["cancel_requested_by"] is None:
            return None
        return str(found[0]["cancel_requested_by"]), str(found[0]["cancel_reason"])

    def attempts(self, run_id: str) -> list[Attempt]:
        from agentctl.store.rows import runs as run_rows

        return self.records(run_rows.attempt_from_row, "SELECT * FROM attempt WHERE run_id = ? "
                            "ORDER BY attempt_number", (run_id,))

    def steps(self, run_id: str) -> list[Step]:
        from agentctl.store.rows import runs as run_rows

        return self.records(run_rows.step_from_row, "SELECT * FROM step WHERE run_id = ? "
                            "ORDER BY attempt_id, sequence_number", (run_id,))

    def tool_calls(self, run_id: str) -> list[ToolCall]:
        from agentctl.store.rows import runs as run_rows

        return self.records(run_rows.tool_call_from_row, "SELECT * FROM tool_call WHERE run_id = ?",
                            (run_id,))

    def artifacts(self, run_id: str | None = None) -> list[Artifact]:
        from agentctl.store.rows import runs as run_rows

        if run_id is None:
            return self.records(run_rows.artifact_from_row,
                                "SELECT * FROM artifact ORDER BY artifact_id")
        return self.records(run_rows.artifact_from_row, "SELECT * FROM artifact WHERE run_id = ? "
                            "ORDER BY artifact_id", (run_id,))

    def artifact(self, text: str) -> Artifact:
        from agentctl.store.rows import runs as run_rows

        artifact_id = self.resolve("artifact", text)
        return self._one(run_rows.artifact_from_row, "SELECT * FROM artifact WHERE artifact_id = ?",
                         (artifact_id,), f"no artifact {artifact_id}")

    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]:
        from agentctl.store.rows import runs as run_rows

        if not artifact_ids:
            return {}
        marks = ", ".join("?" for _ in artifact_ids)
        found = self.records(run_rows.artifact_from_row,
                             f"SELECT * FROM artifact WHERE artifact_id IN ({marks})",
                             list(artifact_ids))
        return {a.artifact_id: a for a in found}

    def patches(self, run_id: str) -> list[Patch]:
        from agentctl.store.rows import evidence as evidence_rows

        return self.records(evidence_rows.patch_from_row,
                            "SELECT * FROM patch WHERE run_id = ? ORDER BY patch_id", (run_id,))

    def patch(self, run_id: str) -> Patch | None:
        return _last(self.patches(run_id))

    def verifications(self, run_id: str) -> list[VerificationReport]:
        from agentctl.store.rows import evidence as evidence_rows

        return self.records(evidence_rows.verification_report_from_row,
                            "SELECT * FROM verification_report WHERE run_id = ? "
                            "ORDER BY verification_report_id", (run_id,))

    def verification(self, run_id: str) -> VerificationReport | None:
        return _last(self.verifications(run_id))

    def judgements(self, run_id: str) -> list[JudgeReport]:
        from agentctl.store.rows import evidence as evidence_rows

        return self.records(evidence_rows.judge_report_from_row, "SELECT * FROM judge_report "
                            "WHERE run_id = ? ORDER BY judge_report_id", (run_id,))

    def judgement(self, run_id: str) -> JudgeReport | None:
        return _last(self.judgements(run_id))

    def verdict(self, run_id: str) -> Verdict | None:
        from agentctl.store.rows import evidence as evidence_rows

        return _last(self.records(evidence_rows.verdict_from_row, "SELECT * FROM verdict WHERE run_id = ?",
                                  (run_id,)))

    def approvals(self, run_id: str) -> list[Approval]:
        from agentctl.store.rows import evidence as evidence_rows

        return self.records(evidence_rows.approval_from_row, "SELECT * FROM approval WHERE run_id = ? "
                            "ORDER BY approval_id", (run_id,))

    def pull_requests(self, run_id: str) -> list[PullRequest]:
        from agentctl.store.rows import evidence as evidence_rows

        return self.records(evidence_rows.pull_request_from_row, "SELECT * FROM pull_request "
                            "WHERE run_id = ? ORDER BY pr_id", (run_id,))

    def repositories(self, task_ids: Sequence[str]) -> dict[str, str | None]:
        """The repository of each task, for listings that show where a run worked."""
        if not task_ids:
            return {}
        marks = ", ".join("?" for _ in task_ids)
        return {str(task_id): repository for task_id, repository in self.tuples(
            f"SELECT task_id, repository FROM task WHERE task_id IN ({marks})", list(task_ids))}

    def run_summaries(self, run_ids: Sequence[str]) -> dict[str, Row]:
        """Verdict status and eligibility per run, for listings."""
        if not run_ids:
            return {}
        marks = ", ".join("?" for _ in run_ids)
        found = self.rows(f"SELECT run_id, status, pr_eligibility, reasons FROM verdict "
                          f"WHERE run_id IN ({marks})", list(run_ids))
        return {str(r["run_id"]): r for r in found}

    # --- events -----------------------------------------------------------------------------
    def events(self, *, run_id: str | None = None, task_id: str | None = None,
               after_seq: int = 0, limit: int | None = None) -> list[Row]:
        where, params = _filters(run_id=run_id, task_id=task_id)
        where += (" AND" if where else " WHERE") + " seq > ?"
        sql = f"SELECT * FROM event{where} ORDER BY seq"
        params = [*params, after_seq]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self.rows(sql, params)

    def event_chain(self) -> Iterator[ChainRow]:
        """Every event as the tuple `find_chain_breaks` checks, in order, streamed."""
        if self._connection is None:
            return iter(())
        cursor = self._connection.cursor()
        cursor.execute("SELECT seq, type, task_id, run_id, attempt_id, step_id, payload, "
                       "created_at, prev_hash, hash FROM event ORDER BY seq")
        return (tuple(row) for row in cursor)

    def event_head(self) -> tuple[int, str] | None:
        found = self.rows("SELECT seq, hash FROM event_head WHERE id = 1")
        return (int(found[0]["seq"]), str(found[0]["hash"])) if found else None

    # --- the storage port's reads (services.unit_of_work.Reads) --------------------------------
    def waiting(self) -> bool:
        """Queued runs, or runs a worker holds (they may come back to the queue)."""
        from agentctl.domain.enums import RunStatus
        from agentctl.domain.transitions import ACTIVE_RUN

        return any(self.runs(limit=1, status=status.value)
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


def _filters(**equals: object) -> tuple[str, list[object]]:
    clauses = [f"{column} = ?" for column, value in equals.items() if value is not None]
    params = [value for value in equals.values() if value is not None]
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


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
    """A read connection to a database at the schema this agentctl needs: one that is behind
    is upgraded first (the write path's migrations), so old homes read like new ones."""
    connection, paramstyle = _open(home)
    if connection is None or home.database_url in _CURRENT:
        return connection, paramstyle
    cursor = connection.cursor()
    try:
        current = stored_revision(cursor, "sqlite" if paramstyle == "qmark" else "postgresql")
    finally:
        cursor.close()
    if current == HEAD:
        _CURRENT.add(home.database_url)
        return connection, paramstyle
    connection.close()
    from agentctl.store.schema import ensure_schema

    ensure_schema(home)
    return _open(home)


_CURRENT: set[str] = set()
"""Databases this process found at HEAD already: a worker's frequent reads check once."""


def _open(home: Home) -> tuple[_Connection | None, str]:
    path = home.sqlite_path
    if path is not None:
        if not path.exists():
            return None, "qmark"
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
        connection.row_factory = sqlite3.Row
        return connection, "qmark"
    from agentctl.store.engine import engine_for, reconnecting  # another database: via SQLAlchemy

    engine = engine_for(home.database_url)
    return reconnecting(engine, engine.raw_connection), "format"
