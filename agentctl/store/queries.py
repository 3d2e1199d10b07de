"""Every read the store answers, as SQLAlchemy Core `select()`s over `tables.py`: the one place
read SQL is written.

Read-only commands must start fast, and importing SQLAlchemy alone costs more than a whole
`task list` (benchmarks/bench_startup.py prints both). So the statements are compiled here, once
per dialect with its own parameter style (`:name` for SQLite, `%(name)s` for psycopg), into
`compiled_queries.py`, which `views.py` runs on the driver. Nothing rewrites SQL text at run time.
After changing a statement or `tables.py`:

    python -m agentctl.store.queries     # rewrites compiled_queries.py (a test checks it is)

A statement is named `what` or `what:detail`, e.g. `runs:status,task_id` (the filters given) or
`resolve:task`. A name not compiled ahead (`everything:` of a table this agentctl does not know)
is compiled on first use, which imports SQLAlchemy.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Select, Table, bindparam, column, func, literal_column, select
from sqlalchemy import table as lightweight_table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler

from agentctl.store import tables
from agentctl.store.generated import module_text, write

KEYS = {"task": "task_id", "session": "session_id", "run": "run_id", "artifact": "artifact_id",
        "attempt": "attempt_id", "step": "step_id", "verdict": "verdict_id",
        "toolcall": "tool_call_id"}
"""Each kind of id a prefix can name, and the column that holds it."""

TASK_FILTERS = ("repository", "session_id", "status")
RUN_FILTERS = ("repository", "status", "task_id")
EVENT_FILTERS = ("limit", "run_id", "task_id")

_BY_RUN = {"attempts": (tables.attempt, ("attempt_number",)),
           "steps": (tables.step, ("attempt_id", "sequence_number")),
           "tool_calls": (tables.tool_call, ()),
           "artifacts": (tables.artifact, ("artifact_id",)),
           "patches": (tables.patch, ("patch_id",)),
           "verifications": (tables.verification_report, ("verification_report_id",)),
           "judgements": (tables.judge_report, ("judge_report_id",)),
           "verdicts": (tables.verdict, ()),
           "approvals": (tables.approval, ("approval_id",)),
           "pull_requests": (tables.pull_request, ("pr_id",))}
"""Reads of one run's records of a kind, and their order."""


def _table(kind: str) -> Table:
    return tables.metadata.tables["tool_call" if kind == "toolcall" else kind]


def _equals(table: Table, name: str) -> ColumnElement[bool]:
    return table.c[name] == bindparam(name)


def _tasks(filters: tuple[str, ...]) -> Select[Any]:
    task = tables.task
    return (select(task).where(*(_equals(task, name) for name in filters))
            .order_by(task.c.task_id.desc()).limit(bindparam("limit")))


def _runs(filters: tuple[str, ...]) -> Select[Any]:
    run, task = tables.run, tables.task
    where = [_equals(run, name) for name in filters if name != "repository"]
    if "repository" in filters:
        where.append(run.c.task_id.in_(select(task.c.task_id)
                                       .where(task.c.repository == bindparam("repository"))))
    return select(run).where(*where).order_by(run.c.run_id.desc()).limit(bindparam("limit"))


def _events(filters: tuple[str, ...]) -> Select[Any]:
    event = tables.event
    query = (select(event).where(*(_equals(event, name) for name in filters if name != "limit"),
                                 event.c.seq > bindparam("after_seq")).order_by(event.c.seq))
    return query.limit(bindparam("limit")) if "limit" in filters else query


def _subsets(names: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    for size in range(len(names) + 1):
        yield from itertools.combinations(names, size)


def _fixed() -> dict[str, Callable[[], Select[Any]]]:
    """The statements whose names carry no detail."""
    t = tables
    return {
        "task": lambda: select(t.task).where(_equals(t.task, "task_id")),
        "task_repository": lambda: select(t.task.c.repository).where(_equals(t.task, "task_id")),
        "sessions": lambda: (select(t.session).order_by(t.session.c.session_id.desc())
                             .limit(bindparam("limit"))),
        "session": lambda: select(t.session).where(_equals(t.session, "session_id")),
        "session_messages": lambda: (select(t.session_message)
                                     .where(_equals(t.session_message, "session_id"))
                                     .order_by(t.session_message.c.message_id)),
        "session_tasks": lambda: (select(t.task.c.task_id).where(_equals(t.task, "session_id"))
                                  .order_by(t.task.c.task_id)),
        "run": lambda: select(t.run).where(_equals(t.run, "run_id")),
        "cancel_request": lambda: (select(t.run.c.cancel_requested_by, t.run.c.cancel_reason)
                                   .where(_equals(t.run, "run_id"))),
        "all_artifacts": lambda: select(t.artifact).order_by(t.artifact.c.artifact_id),
        "artifact": lambda: select(t.artifact).where(_equals(t.artifact, "artifact_id")),
        "run_summary": lambda: (select(t.verdict.c.run_id, t.verdict.c.status,
                                       t.verdict.c.pr_eligibility, t.verdict.c.reasons)
                                .where(_equals(t.verdict, "run_id"))),
        "event_chain": lambda: select(
            t.event.c.seq, t.event.c.type, t.event.c.task_id, t.event.c.run_id,
            t.event.c.attempt_id, t.event.c.step_id, t.event.c.payload, t.event.c.created_at,
            t.event.c.prev_hash, t.event.c.hash).order_by(t.event.c.seq),
        "event_head": lambda: (select(t.event_head.c.seq, t.event_head.c.hash)
                               .where(t.event_head.c.id == 1)),
        "step_tree": lambda: (select(
            t.step.c.step_id, t.step.c.attempt_id, t.step.c.sequence_number, t.step.c.type,
            t.step.c.status, t.step.c.title, t.step.c.started_at, t.step.c.ended_at,
            t.step.c.failure_code, t.step.c.attributes).where(_equals(t.step, "run_id"))
            .order_by(t.step.c.attempt_id, t.step.c.sequence_number)),
        "call_tree": lambda: select(
            t.tool_call.c.step_id, t.tool_call.c.tool_call_id, t.tool_call.c.tool_name,
            t.tool_call.c.arguments_json, t.tool_call.c.decision, t.tool_call.c.matched_rule,
            t.tool_call.c.denial_reason, t.tool_call.c.result, t.tool_call.c.approved_by,
            t.tool_call.c.requested_at, t.tool_call.c.completed_at,
            t.tool_call.c.spec_digest).where(_equals(t.tool_call, "run_id")),
        "call_digests": lambda: select(
            t.tool_call.c.tool_call_id, t.tool_call.c.tool_name, t.tool_call.c.arguments_json,
            t.tool_call.c.decision, t.tool_call.c.matched_rule, t.tool_call.c.denial_reason,
            t.tool_call.c.approved_by, t.tool_call.c.result),
        "run_statuses": lambda: select(t.run.c.run_id, t.run.c.status),
        "ended_attempt_directory": lambda: (
            select(t.attempt.c.directory)
            .where(_equals(t.attempt, "directory"),
                   t.attempt.c.status.not_in([bindparam("live_1"), bindparam("live_2")]))),
        "lease_due": lambda: (
            select(literal_column("1"))
            .where(t.attempt.c.status.in_([bindparam("live_1"), bindparam("live_2")]),
                   t.attempt.c.lease_expires_at <= bindparam("now")).limit(1)),
        "attempt_span": lambda: select(func.min(t.attempt.c.started_at).label("first"),
                                       func.max(t.attempt.c.ended_at).label("last")),
    }


def _table_names(dialect: str) -> Select[Any]:
    """The tables of the database as it is (one a later schema added included)."""
    if dialect == "sqlite":
        master = lightweight_table("sqlite_master", column("name"), column("type"))
        return select(master.c.name).where(master.c.type == "table",
                                           master.c.name.not_like("sqlite_%"))
    catalog = lightweight_table("tables", column("table_name"), column("table_schema"),
                                column("table_type"), schema="information_schema")
    return select(catalog.c.table_name).where(catalog.c.table_schema == func.current_schema(),
                                              catalog.c.table_type == "BASE TABLE")


def statement(name: str, dialect: str) -> Select[Any]:
    """The statement called `name` (KeyError for none)."""
    what, _, detail = name.partition(":")
    filters = tuple(detail.split(",")) if detail else ()
    if what == "tasks":
        return _tasks(filters)
    if what == "runs":
        return _runs(filters)
    if what == "events":
        return _events(filters)
    if what in _BY_RUN:
        table, order = _BY_RUN[what]
        return select(table).where(_equals(table, "run_id")).order_by(*(table.c[o] for o in order))
    if what in ("resolve", "below", "above"):
        table, key = _table(detail), KEYS[detail]
        if what == "resolve":
            return (select(table.c[key]).where(table.c[key] >= bindparam("low"),
                                               table.c[key] < bindparam("high"))
                    .order_by(table.c[key]).limit(4))
        edge = func.max if what == "below" else func.min
        near = table.c[key] < bindparam("id") if what == "below" else table.c[key] > bindparam("id")
        return select(edge(table.c[key])).where(near)
    if what == "everything":  # `*`: the columns the database has, not the ones we know of
        known = tables.metadata.tables.get(detail)
        source = known if known is not None else lightweight_table(detail)
        return select(literal_column("*")).select_from(source)
    if what == "count":
        return select(func.count().label("n")).select_from(tables.metadata.tables[detail])
    if what == "table_names":
        return _table_names(dialect)
    return _fixed()[what]()


def names() -> list[str]:
    """Every statement compiled ahead."""
    found = [*_fixed(), *_BY_RUN, "table_names"]
    found += [f"tasks:{','.join(s)}" for s in _subsets(TASK_FILTERS)]
    found += [f"runs:{','.join(s)}" for s in _subsets(RUN_FILTERS)]
    found += [f"events:{','.join(s)}" for s in _subsets(EVENT_FILTERS)]
    found += [f"{what}:{kind}" for what in ("resolve", "below", "above") for kind in KEYS]
    found += [f"{what}:{name}" for what in ("everything", "count") for name in tables.metadata.tables]
    return sorted(found)


@cache
def dialects() -> dict[str, Dialect]:
    """Each dialect as the driver at run time takes it: SQLite's named parameters (the stdlib
    driver binds them from a dict), psycopg's pyformat."""

    return {"sqlite": sqlite.dialect(paramstyle="named"),
            "postgresql": postgresql.psycopg.dialect()}  # type: ignore[no-untyped-call]


Compiled = tuple[str, dict[str, object]]
"""A statement's SQL in the dialect's own parameter style, and the values of the parameters
it holds itself (its constants: a LIMIT, a literal); the caller gives the others by name."""


def compile_one(name: str, dialect: str) -> Compiled:
    done = statement(name, dialect).compile(dialect=dialects()[dialect])
    return str(done), constants(done)


def constants(done: SQLCompiler) -> dict[str, object]:
    """The values of the parameters a compiled statement holds itself (not those it needs)."""
    given = {bind.key for bind in done.binds.values() if bind.required}
    return {key: value for key, value in done.params.items() if key not in given}


def compiled() -> dict[str, dict[str, Compiled]]:
    return {dialect: {name: compile_one(name, dialect) for name in names()}
            for dialect in dialects()}


TARGET = Path(__file__).with_name("compiled_queries.py")


def render() -> str:
    return module_text("python -m agentctl.store.queries", "queries.py", "SQL",
                       "dict[str, dict[str, tuple[str, dict[str, object]]]]", compiled())


if __name__ == "__main__":
    write(TARGET, render())
