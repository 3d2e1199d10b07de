"""A home written by each earlier schema revision, with runs in it, upgrades with `db upgrade`
(in SQLite, and with the same rows restored into PostgreSQL) and still passes `audit verify`;
its old runs still show and explain. The homes are in tests/fixtures (see its README)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import MetaData, create_engine

from agentctl.store import migrate
from agentctl.store.revision import HEAD

FIXTURES = Path(__file__).parent.parent / "fixtures"


@dataclass(frozen=True)
class OldHome:
    revision: str
    folder: str
    signed: bool  # homes from before signed checkpoints cannot pass `audit verify` as they are


HOMES = [
    OldHome("0001", "home-e7985e3", signed=False),
    OldHome("0002", "homes/0002", signed=True),
    OldHome("0003", "homes/0003", signed=True),
    OldHome("0004", "homes/0004", signed=True),
    OldHome("0005", "home-1e5ccd9", signed=True),
]
# What a home from before signing and artifact events finds besides (the old era's, not the
# upgrade's): test_migrations.py names them.
UNSIGNED_ERA = ("no signed checkpoint vouches", "no event records its creation")


def restore(old: OldHome, target: Path) -> Path:
    """A copy of the fixture home; a database kept as SQL text is rebuilt as the file it was."""
    shutil.copytree(FIXTURES / old.folder, target)
    dump = target / "agentctl.sql"
    if dump.exists():
        with sqlite3.connect(target / "agentctl.db") as db:
            db.executescript(dump.read_text(encoding="utf-8"))
        dump.unlink()
    return target


@dataclass(frozen=True)
class Written:
    """What the old agentctl recorded: each run's status and its verdict's."""

    runs: dict[str, str]
    verdicts: dict[str, str]


def written(db: Path) -> Written:
    with sqlite3.connect(db) as connection:
        return Written(dict(connection.execute("SELECT run_id, status FROM run").fetchall()),
                       dict(connection.execute("SELECT run_id, status FROM verdict").fetchall()))


def assert_verifies(report: Any, old: OldHome) -> None:
    assert report["breaks"] == [], report
    if old.signed:
        assert report["ok"] is True, report
        assert report["checkpoint"]["state"] == "verified"
    else:
        assert all(p["problem"].startswith(UNSIGNED_ERA) for p in report["problems"]), report


def assert_old_runs_read(run: Callable[..., Any], old: Written) -> None:
    listed = {r["runId"]: r["status"] for r in run("run", "list", "--json").json()}
    assert listed == old.runs
    for run_id, status in old.runs.items():
        shown = run("run", "show", run_id, "--json")
        assert shown.returncode == 0, shown.stderr
        assert (shown.json()["runId"], shown.json()["status"]) == (run_id, status)
    for run_id, status in old.verdicts.items():
        explained = run("verdict", "explain", run_id, "--json")
        assert explained.returncode == 0, explained.stderr
        assert (explained.json()["runId"], explained.json()["status"]) == (run_id, status)
        assert explained.json()["evidence"] or status == "CANCELLED"


@pytest.mark.parametrize("old", HOMES, ids=[h.revision for h in HOMES])
def test_an_old_home_upgrades_in_sqlite_and_verifies(
        tmp_path: Path, run_agentctl: Callable[..., Any], old: OldHome) -> None:
    home = restore(old, tmp_path / "home")
    before = written(home / "agentctl.db")
    assert len(before.runs) >= 3 and len(set(before.verdicts.values())) >= 3

    def run(*args: str) -> Any:
        return run_agentctl(*args, home=home, cwd=tmp_path)

    assert run("db", "current", "--json").json()["revision"] == old.revision
    done = run("db", "upgrade", "--json")
    assert done.returncode == 0, done.stderr
    assert (done.json()["fromRevision"], done.json()["toRevision"]) == (old.revision, HEAD)
    assert_verifies(run("audit", "verify", "--json").json(), old)
    assert_old_runs_read(run, before)


def copy_rows(source: Path, url: str) -> None:
    """Every row of the SQLite database into the PostgreSQL one (at the same revision), table
    by table in dependency order: the same data, as that revision's PostgreSQL schema holds it."""
    target = create_engine(url)
    metadata = MetaData()
    metadata.reflect(target)
    with sqlite3.connect(source) as db, target.begin() as connection:
        db.row_factory = sqlite3.Row
        for table in metadata.sorted_tables:
            if table.name == "alembic_version":
                continue
            rows = [dict(r) for r in db.execute(f"SELECT * FROM {table.name}")]
            if rows:
                connection.execute(table.insert(), rows)
    target.dispose()


# On PostgreSQL the oldest home (every migration in turn, on its data) and the newest: each
# home between starts the same chain further on, which SQLite runs for every one.
ENDS = [HOMES[0], HOMES[-1]]


@pytest.mark.parametrize("old", ENDS, ids=[h.revision for h in ENDS])
def test_an_old_home_restored_in_postgresql_upgrades_and_verifies(
        tmp_path: Path, run_agentctl: Callable[..., Any], postgres: Any, old: OldHome) -> None:
    home = restore(old, tmp_path / "home")
    before = written(home / "agentctl.db")
    url = postgres.database(empty=True)
    engine = create_engine(url)
    with engine.begin() as connection:
        cfg = migrate.config()
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, old.revision)
    engine.dispose()
    copy_rows(home / "agentctl.db", url)
    (home / "agentctl.db").unlink()  # the home keeps its key, checkpoint and artifacts

    def run(*args: str) -> Any:
        return run_agentctl(*args, home=home, cwd=tmp_path, env={"AGENTCTL_DATABASE_URL": url})

    assert run("db", "current", "--json").json()["revision"] == old.revision
    done = run("db", "upgrade", "--json")
    assert done.returncode == 0, done.stderr
    assert done.json()["toRevision"] == HEAD
    assert_verifies(run("audit", "verify", "--json").json(), old)
    assert_old_runs_read(run, before)


def test_an_old_record_edited_after_the_upgrade_is_still_found(
        tmp_path: Path, run_agentctl: Callable[..., Any]) -> None:
    """Its event may hold the digest taken before a field existed; a value put in that field
    afterwards matches neither digest."""
    home = restore(HOMES[3], tmp_path / "home")
    assert run_agentctl("db", "upgrade", home=home, cwd=tmp_path).returncode == 0
    with sqlite3.connect(home / "agentctl.db") as db:
        patch_id, check = db.execute("SELECT patch_id, boundary_check FROM patch "
                                     "ORDER BY patch_id LIMIT 1").fetchone()
        edited = check.replace('"matchedRules"', '"unexpectedBinaryFiles":["x.bin"],'
                                                 '"matchedRules"')
        assert edited != check
        db.execute("UPDATE patch SET boundary_check = ? WHERE patch_id = ?", (edited, patch_id))
    result = run_agentctl("audit", "verify", "--json", home=home, cwd=tmp_path)
    assert result.returncode != 0
    report = result.json()
    assert report["ok"] is False
    assert {"what": f"patch {patch_id}", "problem": "its content does not match the event that "
            "created it (edited)"} in report["problems"]
