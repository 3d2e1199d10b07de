"""Schema migrations: the baseline is the schema before migrations, the head is tables.py, and a
home made by the previous schema is upgraded (by `db upgrade`, or by the first command that
writes) with its data intact; a read never migrates and names the command that does."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from agentctl.home import resolve_home
from agentctl.store import migrate, schema_statements, sqlite_schema, tables
from agentctl.store.revision import HEAD
from agentctl.store.schema import ensure_schema

FIXTURE = Path(__file__).parent.parent / "fixtures" / "home-e7985e3"
OLD_RUN = "run_01M8X6V0NE0929D05VSC1AVNQ7"  # the demo's migration that needs review


def old_home(tmp_path: Path) -> Path:
    target = tmp_path / "old-home"
    shutil.copytree(FIXTURE, target)
    return target


def columns(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Per table: (name, type, not null, default, pk) per column, and its indexes."""
    with sqlite3.connect(db) as connection:
        names = [r[0] for r in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'alembic_version' "
            "ORDER BY name")]
        shape: dict[str, list[tuple[object, ...]]] = {}
        for name in names:
            shape[name] = [tuple(r[1:]) for r in connection.execute(f"PRAGMA table_info({name})")]
            shape[name] += sorted((r[1], r[2]) for r in connection.execute(
                f"PRAGMA index_list({name})"))
    return shape


def dump(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(db) as connection:
        names = [r[0] for r in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {name: sorted(connection.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
                for name in names}


def test_the_revision_agentctl_checks_is_alembics_head() -> None:
    assert migrate.script_head() == HEAD


def test_migrations_build_exactly_the_tables_of_tables_py(tmp_path: Path) -> None:
    home = resolve_home(str(tmp_path / "home"))
    home.root.mkdir()
    engine = create_engine(home.database_url)
    done = migrate.upgrade(engine, home)
    assert (done.from_revision, done.to_revision, done.backup) == (None, HEAD, None)
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), tables.metadata) == []


def test_a_new_home_gets_the_schema_the_migrations_build_without_replaying_them(
        tmp_path: Path) -> None:
    """A new SQLite home is created from tables.py at once (no Alembic): the same tables,
    columns, indexes and revision stamp as replaying every migration gives."""
    migrated = resolve_home(str(tmp_path / "migrated"))
    migrated.root.mkdir()
    migrate.upgrade(create_engine(migrated.database_url), migrated)
    created = resolve_home(str(tmp_path / "created"))
    ensure_schema(created)
    engine = create_engine(created.database_url)
    assert migrated.sqlite_path is not None and created.sqlite_path is not None
    made, replayed = columns(created.sqlite_path), columns(migrated.sqlite_path)
    assert made.keys() == replayed.keys()
    for table, shape in made.items():  # a column a migration added comes last there
        assert sorted(shape, key=repr) == sorted(replayed[table], key=repr), table
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), tables.metadata) == []
    assert migrate.current(engine) == HEAD

    def stamp(db: Path) -> list[tuple[object, ...]]:
        with sqlite3.connect(db) as connection:
            return connection.execute("SELECT sql FROM sqlite_master WHERE name LIKE "
                                      "'%alembic_version%' ORDER BY name").fetchall()

    assert stamp(created.sqlite_path) == stamp(migrated.sqlite_path)


def test_a_new_home_is_made_by_the_statements_create_all_runs_compiled_ahead(
        tmp_path: Path) -> None:
    """sqlite_schema.py is what tables.py compiles to now, and a new home made from it holds
    the same schema, byte for byte, as `metadata.create_all` makes."""
    assert schema_statements.TARGET.read_text() == schema_statements.render(), (
        "store/sqlite_schema.py is stale: run 'python -m agentctl.store.schema_statements'")
    assert sqlite_schema.STATEMENTS == schema_statements.sqlite_statements()
    created = resolve_home(str(tmp_path / "created"))
    ensure_schema(created)
    direct = tmp_path / "direct.db"
    with create_engine(f"sqlite:///{direct}").begin() as connection:
        tables.metadata.create_all(connection)

    def master(db: Path) -> list[tuple[object, ...]]:
        with sqlite3.connect(db) as connection:
            return connection.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master "
                "WHERE name NOT LIKE '%alembic_version%' ORDER BY type, name").fetchall()

    assert created.sqlite_path is not None
    assert master(created.sqlite_path) == master(direct)


def test_the_baseline_is_the_schema_before_migrations(tmp_path: Path) -> None:
    db = tmp_path / "baseline.db"
    engine = create_engine(f"sqlite:///{db}")
    cfg = migrate.config()
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "0001")
    assert columns(db) == columns(FIXTURE / "agentctl.db")


BEHIND = (f"agentctl: error: the database predates schema revisions, this agentctl needs {HEAD}: "
          "run 'agentctl db upgrade'")


@pytest.mark.parametrize("command_line", [
    ("run", "show", OLD_RUN, "--json"), ("task", "list"), ("audit", "verify"), ("run", "list")])
def test_a_read_of_an_old_home_is_refused_with_the_upgrade_command_and_changes_nothing(
        tmp_path: Path, run_cli: Callable[..., object], command_line: tuple[str, ...]) -> None:
    home = old_home(tmp_path)
    before = dump(home / "agentctl.db")
    refused = run_cli(*command_line, home=home, cwd=tmp_path)
    assert refused.returncode == 2  # type: ignore[attr-defined]
    assert refused.stderr.strip().splitlines() == [BEHIND]  # type: ignore[attr-defined]
    assert dump(home / "agentctl.db") == before
    assert not list(home.glob("agentctl.db.pre-*"))


def test_an_old_home_is_upgraded_with_its_data_intact(
        tmp_path: Path, run_cli: Callable[..., object]) -> None:
    home = old_home(tmp_path)
    before = dump(home / "agentctl.db")

    upgraded = run_cli("db", "upgrade", home=home, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr  # type: ignore[attr-defined]
    shown = run_cli("run", "show", OLD_RUN, "--json", home=home, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr  # type: ignore[attr-defined]
    document = shown.json()  # type: ignore[attr-defined]
    assert document["runId"] == OLD_RUN and document["status"] == "NEEDS_APPROVAL"

    backup = home / f"agentctl.db.pre-{HEAD}.bak"
    assert dump(backup) == before  # the copy is the database as it was
    after = dump(home / "agentctl.db")
    assert after["alembic_version"] == [(HEAD,)]
    for table in before:
        if table == "tool_call":
            continue
        # patch and verdict gained `tree_id`, attempt `directory`, task its `intent`, run its
        # `replay_of`: NULL for old rows
        widened = {"patch", "verdict", "attempt", "task", "run"}
        rows = [row[:-1] for row in after[table]] if table in widened else after[table]
        assert rows == before[table], table
        if table in widened:
            assert {row[-1] for row in after[table]} <= {None}
    assert len(after["tool_call"]) == len(before["tool_call"])
    outcomes = {}
    for row in after["tool_call"]:
        result = row[9]
        if result is not None:
            decoded = json.loads(result)
            assert "ok" not in decoded
            outcomes[decoded["outcome"]] = outcomes.get(decoded["outcome"], 0) + 1
    assert outcomes.get("ok", 0) > 0


def test_the_upgrade_leaves_the_audit_trail_intact(
        tmp_path: Path, run_cli: Callable[..., object]) -> None:
    """The chain still verifies, and no record changed under its event. What the audit finds
    besides is the old era's: no signed checkpoint, artifacts made before they had events."""
    home = old_home(tmp_path)
    run_cli("db", "upgrade", home=home, cwd=tmp_path)
    report = run_cli("audit", "verify", "--json", home=home, cwd=tmp_path).json()  # type: ignore[attr-defined]
    assert report["breaks"] == [] and report["events"] == 180
    assert report["head"]["seq"] == 180
    assert report["checkpoint"]["state"] == "unsigned"
    kinds = {(p["what"].split()[0], p["problem"]) for p in report["problems"]}
    assert kinds <= {("checkpoint", next(p["problem"] for p in report["problems"]
                                         if p["what"] == "checkpoint")),
                     ("artifact", "no event records its creation")}


@pytest.mark.parametrize("command_line", [
    ("run", "show", "--tree", OLD_RUN), ("verdict", "explain", OLD_RUN), ("events", "--run",
    OLD_RUN), ("artifact", "list", OLD_RUN), ("verdict", "show", OLD_RUN), ("run", "list")])
def test_every_read_command_works_on_an_upgraded_old_home(
        tmp_path: Path, run_cli: Callable[..., object], command_line: tuple[str, ...]) -> None:
    home = old_home(tmp_path)
    run_cli("db", "upgrade", home=home, cwd=tmp_path)
    result = run_cli(*command_line, home=home, cwd=tmp_path)
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]


def test_db_current_and_upgrade_report_the_revision(
        tmp_path: Path, run_cli: Callable[..., object]) -> None:
    home = old_home(tmp_path)
    behind = run_cli("db", "current", "--json", home=home, cwd=tmp_path)
    assert behind.json() == {"revision": "0001", "head": HEAD, "upToDate": False}  # type: ignore[attr-defined]
    assert not (home / f"agentctl.db.pre-{HEAD}.bak").exists()  # reading changed nothing

    done = run_cli("db", "upgrade", "--json", home=home, cwd=tmp_path).json()  # type: ignore[attr-defined]
    assert done == {"fromRevision": "0001", "toRevision": HEAD, "upgraded": True,
                    "backup": str(home / f"agentctl.db.pre-{HEAD}.bak")}
    again = run_cli("db", "upgrade", "--json", home=home, cwd=tmp_path).json()  # type: ignore[attr-defined]
    assert again["upgraded"] is False and again["fromRevision"] == HEAD
    now = run_cli("db", "current", home=home, cwd=tmp_path)
    assert now.stdout.strip() == f"revision {HEAD}, head {HEAD}: up to date"  # type: ignore[attr-defined]


def test_a_command_that_writes_upgrades_an_old_home_even_when_it_reads_first(
        tmp_path: Path, run_cli: Callable[..., object]) -> None:
    home = old_home(tmp_path)
    approved = run_cli("verdict", "approve", OLD_RUN, "--reason", "reviewed", "--by", "ann",
                       home=home, cwd=tmp_path)  # resolves the run before it writes
    assert approved.returncode == 0, approved.stderr  # type: ignore[attr-defined]
    assert dump(home / "agentctl.db")["alembic_version"] == [(HEAD,)]
    assert (home / f"agentctl.db.pre-{HEAD}.bak").exists()


def test_processes_starting_together_on_an_old_home_upgrade_it_once(
        tmp_path: Path, agentctl_executable: str) -> None:
    home = old_home(tmp_path)
    processes = [subprocess.Popen([agentctl_executable, "--home", str(home), "session", "start",
                                   "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(4)]
    outputs = [process.communicate(timeout=120) for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0, 0], outputs
    listed = subprocess.run([agentctl_executable, "--home", str(home), "run", "list", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert len(json.loads(listed.stdout)) == 4, listed.stderr
    assert sorted(p.name for p in home.glob("agentctl.db.pre-*")) == [f"agentctl.db.pre-{HEAD}.bak"]
    assert dump(home / "agentctl.db")["alembic_version"] == [(HEAD,)]


def test_a_shared_database_that_is_behind_waits_for_db_upgrade(
        tmp_path: Path, run_cli: Callable[..., object], postgres: object) -> None:
    url = postgres.database(empty=True)  # type: ignore[attr-defined]
    engine = create_engine(url)
    cfg = migrate.config()
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "0001")
    engine.dispose()
    env = {"AGENTCTL_DATABASE_URL": url}
    home = tmp_path / "home"

    refused = run_cli("task", "list", home=home, cwd=tmp_path, env=env)
    assert refused.returncode == 2  # type: ignore[attr-defined]
    assert refused.stderr.strip().splitlines() == [  # type: ignore[attr-defined]
        f"agentctl: error: the database is at schema revision 0001, this agentctl needs {HEAD}: "
        "run 'agentctl db upgrade'"]
    behind = run_cli("db", "current", "--json", home=home, cwd=tmp_path, env=env)
    assert behind.json()["revision"] == "0001"  # type: ignore[attr-defined]

    done = run_cli("db", "upgrade", "--json", home=home, cwd=tmp_path, env=env).json()  # type: ignore[attr-defined]
    assert done == {"fromRevision": "0001", "toRevision": HEAD, "upgraded": True, "backup": None}
    listed = run_cli("task", "list", home=home, cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr  # type: ignore[attr-defined]


def test_a_new_empty_shared_database_is_set_up_on_first_use(
        tmp_path: Path, run_cli: Callable[..., object], postgres: object) -> None:
    url = postgres.database(empty=True)  # type: ignore[attr-defined]
    env = {"AGENTCTL_DATABASE_URL": url}
    listed = run_cli("task", "list", "--json", home=tmp_path / "home", cwd=tmp_path, env=env)
    assert listed.returncode == 0 and listed.json() == [], listed.stderr  # type: ignore[attr-defined]
    untouched = run_cli("db", "current", "--json", home=tmp_path / "home", cwd=tmp_path,
                        env=env)
    assert untouched.json()["revision"] is None  # type: ignore[attr-defined]  # a read wrote nothing
    first = run_cli("session", "start", home=tmp_path / "home", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr  # type: ignore[attr-defined]
    now = run_cli("db", "current", "--json", home=tmp_path / "home", cwd=tmp_path, env=env)
    assert now.json() == {"revision": HEAD, "head": HEAD, "upToDate": True}  # type: ignore[attr-defined]


def test_a_run_sealed_before_it_had_replay_of_keeps_its_seal() -> None:
    """0006 added `run.replay_of`: a run row sealed before (its value NULL now) digests as it
    did without the column, and one that names a run digests that name."""
    from agentctl.domain.audit import row_digest
    from agentctl.store.seals import SEALED

    sealed = SEALED["run"]
    at = sealed.columns.index("replay_of")
    values: list[object] = [f"value {n}" for n in range(len(sealed.columns))]
    before = tuple(values[:at] + values[at + 1:])
    values[at] = None
    assert sealed.digest(values) == row_digest(before)
    values[at] = "run_01REPLAYED"
    assert sealed.digest(values) != row_digest(before)
