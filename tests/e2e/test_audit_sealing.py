"""Every field of every record is sealed into the signed event log, on both stores.

The test is generated from the schema: for every column of every record table in
`store/tables.py`, a value edited on a copy of a real home (a session, a task, a run through a
script agent, an approval and a pull request) makes `audit verify` fail naming that record. A
column added later is covered, or this test fails: the columns left out are only the ones
`store/seal_rules.py` names as lease bookkeeping, whose final values are sealed apart
when the attempt ends (tested below).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentctl.domain.audit import record_name
from agentctl.home import Home
from agentctl.store import tables
from agentctl.store.audit import verify_store
from agentctl.store.seal_rules import LEASE_BOOKKEEPING, LEASE_SEAL, NOT_RECORDS
from agentctl.store.storage import Store
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench

RECORD_TABLES = [t.name for t in tables.metadata.sorted_tables if t.name not in NOT_RECORDS]
PLAN = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
        "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}


@dataclass
class Built:
    bench: Bench
    url: str | None  # None: SQLite in the home


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          repo_maker: Any, run_agentctl: Any) -> Built:
    """A home with a row in every record table."""
    root = tmp_path_factory.mktemp(f"sealed-{request.param}")
    url = request.getfixturevalue("postgres").database() if request.param == "postgresql" \
        else None
    repo = repo_maker(root / "calc", CALC_FILES)
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    bench = Bench(root, run_agentctl)
    bench.config(f'[store]\nurl = "{url}"\n' if url else "")
    session = bench.json("session", "start", "--title", "sealing")["sessionId"]
    bench.cli("session", "say", session, "please document add")
    task = bench.submit(repo, "--verify", UNITTEST, "--autonomy", "supervised_pr")
    run = bench.start(task, f"script:{bench.plan('plan.toml', PLAN)}")
    assert run["status"] == "NEEDS_APPROVAL", run
    bench.cli("verdict", "approve", run["runId"], "--by", "alice", "--reason", "read it")
    bench.cli("pr", "create", run["runId"], "--remote", str(remote), "--json")
    assert bench.cli("audit", "verify").returncode == 0
    return Built(bench, url)


class Tampered:
    """A private copy of the built home (its database too), to edit with plain SQL."""

    def __init__(self, built: Built, target: Path, postgres: Any) -> None:
        self.home = target / "home"
        shutil.copytree(built.bench.home, self.home)
        self.url = postgres.copy(built.url) if built.url else None
        self.bench = Bench(target, built.bench.run_agentctl)
        self.bench.home = self.home

    def _execute(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        if self.url is None:
            with sqlite3.connect(self.home / "agentctl.db") as connection:
                rows = connection.execute(sql, params).fetchall()
            connection.close()
            return rows
        import psycopg

        with psycopg.connect(self.url.replace("postgresql+psycopg", "postgresql")) as connection:
            cursor = connection.execute(sql.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []

    def first(self, table: str, key: str) -> dict[str, Any]:
        names = [column.name for column in tables.metadata.tables[table].columns]
        rows = self._execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY {key} LIMIT 1")
        assert rows, f"the built home has no {table} row: build one so it is tested"
        return dict(zip(names, rows[0], strict=True))

    def set(self, table: str, key: str, identifier: str, column: str, value: object) -> None:
        self._execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", (value, identifier))

    def verify(self) -> Any:
        store = Store(Home(root=self.home, database_url=self.url or None) if self.url
                      else _sqlite_home(self.home))
        return verify_store(store)

    def cli_verify(self) -> Any:
        env = {"AGENTCTL_DATABASE_URL": self.url} if self.url else None
        return self.bench.cli("audit", "verify", expect=None, env=env)


def _sqlite_home(root: Path) -> Home:
    from agentctl.home import resolve_home

    return resolve_home(str(root))


def _edited(value: object, column: Any) -> object:
    """A different value of the column's type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1000
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return value + "x"
    return 1 if column.type.python_type is int else "x"


@pytest.fixture
def tampered(built: Built, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Tampered]:
    postgres = request.getfixturevalue("postgres") if built.url else None
    yield Tampered(built, tmp_path, postgres)


@pytest.mark.parametrize("table", RECORD_TABLES)
def test_every_column_of_every_record_table_is_sealed(tampered: Tampered, table: str) -> None:
    schema = tables.metadata.tables[table]
    (key,) = [column.name for column in schema.primary_key.columns]
    row = tampered.first(table, key)
    identifier = str(row[key])
    left_out = LEASE_BOOKKEEPING.get(table, frozenset())
    missed = []
    for column in schema.columns:
        if column.name in left_out:
            continue
        tampered.set(table, key, identifier, column.name, _edited(row[column.name], column))
        edited_id = str(_edited(identifier, column)) if column.name == key else identifier
        report = tampered.verify()
        named = [p for p in report.problems if p.what in (record_name(table, identifier),
                                                          record_name(table, edited_id))]
        if not named:
            missed.append(column.name)
        if column.name == schema.columns[0].name:  # the CLI's answer, once per table
            result = tampered.cli_verify()
            assert result.returncode == 3, (result.returncode, result.stderr)
            assert identifier in result.stderr or edited_id in result.stderr, result.stderr
        where = edited_id if column.name == key else identifier
        tampered.set(table, key, where, column.name, row[column.name])
    assert not missed, f"{table}: edits to {missed} pass `audit verify`"
    assert tampered.verify().ok  # every edit undone: the seals hold again


@pytest.mark.parametrize("column", sorted(LEASE_BOOKKEEPING["attempt"]))
def test_an_ended_attempts_lease_columns_edited_afterwards_are_found(
        tampered: Tampered, column: str) -> None:
    """Left out of the attempt's own seal (every heartbeat rewrites them), their final values
    are sealed when the attempt ends."""
    row = tampered.first("attempt", "attempt_id")
    assert row["ended_at"] is not None
    identifier = row["attempt_id"]
    tampered.set("attempt", "attempt_id", identifier, column,
                 _edited(row[column], tables.metadata.tables["attempt"].columns[column]))
    report = tampered.verify()
    assert [p.detail for p in report.problems if p.what == record_name(LEASE_SEAL, identifier)] \
        == ["its content does not match the event that last sealed it (edited)"]
    result = tampered.cli_verify()
    assert result.returncode == 3 and identifier in result.stderr, result.stderr
    tampered.set("attempt", "attempt_id", identifier, column, row[column])
    assert tampered.verify().ok


def test_a_row_inserted_behind_the_log_is_found(tampered: Tampered) -> None:
    row = tampered.first("session", "session_id")
    forged = {**row, "session_id": row["session_id"][:-4] + "ZZZZ"}
    names = ", ".join(forged)
    marks = ", ".join("?" for _ in forged)
    tampered._execute(f"INSERT INTO session ({names}) VALUES ({marks})", tuple(forged.values()))
    report = tampered.verify()
    assert [p.detail for p in report.problems
            if p.what == record_name("session", forged["session_id"])] == \
        ["no event seals its content (inserted behind the log)"]


def test_every_record_tables_first_column_is_its_key() -> None:
    """`audit verify` reads rows without the ORM and names each by its first column."""
    for name in RECORD_TABLES:
        table = tables.metadata.tables[name]
        assert [c.name for c in table.primary_key.columns] == [table.columns[0].name], name
