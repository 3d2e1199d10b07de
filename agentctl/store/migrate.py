"""Schema migrations with Alembic: bring a database to `revision.HEAD`, safely and once.

Upgrades run in one write transaction (BEGIN IMMEDIATE on SQLite, a transaction-scoped advisory
lock on PostgreSQL) that re-reads the revision first, so processes starting together on an old
or new database upgrade it once and the others find it done. An embedded SQLite home that holds
data is copied beside itself first (`agentctl.db.pre-0002.bak`).

Homes made before migrations record no revision: a database with tables is stamped with the
revision its columns show (0001; 0002 once `patch.tree_id` exists; 0003 once
`pull_request.forge` does; 0004 once `attempt.directory` does; 0005 once `task.intent`
does; 0006 once `run.replay_of` does) and upgraded from there.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect, text

from agentctl.home import Home
from agentctl.store.busy import BUSY_TIMEOUT_SECONDS
from agentctl.store.revision import HEAD, SchemaBehind, revision_of
from agentctl.store.transactions import when_unlocked

_LOCK_KEY = 0x61676E74  # "agnt": the advisory lock that serializes upgrades on PostgreSQL


@dataclass(frozen=True, slots=True)
class Upgrade:
    """What an upgrade did: from which revision (None: an empty database) to which."""

    from_revision: str | None
    to_revision: str
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.from_revision != self.to_revision


def config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", "agentctl.store:migrations")
    return cfg


def script_head() -> str:
    """Alembic's own idea of the newest revision (a test holds it equal to `HEAD`)."""
    head = ScriptDirectory.from_config(config()).get_current_head()
    assert head is not None
    return head


def _revision(connection: Connection) -> str | None:
    """The revision, read on the driver outside a write transaction: on SQLite, a connection
    with no busy handler (`transactions.prepare_connection`), so the read waits in our loop for
    a lock held a moment (its first read of a database it just switched to WAL meets another's
    WAL recovery); a PostgreSQL error is none of the loop's and passes through."""
    return when_unlocked(revision_of, connection)


def current(engine: Engine) -> str | None:
    """The revision the database is at (for a home made before migrations, the one its columns
    show); None when it has no schema yet."""
    with engine.connect() as connection:
        return _revision(connection) or _legacy_revision(connection)


def upgrade(engine: Engine, home: Home, *, automatic: bool = False) -> Upgrade:
    """Bring the database to HEAD. `automatic` (a command's first use, not `db upgrade`):
    shared databases that hold data are left to an operator's `agentctl db upgrade`."""
    with engine.connect() as connection:
        before = _revision(connection)
    if before == HEAD:
        return Upgrade(before, HEAD)
    embedded = home.sqlite_path is not None
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
        start = _revision(connection)  # again, under the lock: another process may be done
        if start == HEAD:
            return Upgrade(start, HEAD)
        legacy = _legacy_revision(connection) if start is None else None
        if automatic and not embedded and (start or legacy) is not None:
            raise SchemaBehind(f"the database is at schema revision {start or legacy}, this "
                               f"agentctl needs {HEAD}: run 'agentctl db upgrade'")
        # Taken while we hold the write lock (WAL readers still read): the last committed state.
        backup = _backup(home.sqlite_path) if embedded else None
        cfg = config()
        cfg.attributes["connection"] = connection
        if legacy is not None:
            command.stamp(cfg, legacy)
        command.upgrade(cfg, "head")
    return Upgrade(start or legacy, HEAD, backup)


def _legacy_revision(connection: Connection) -> str | None:
    """The revision of a database made before migrations: None when it has no tables."""
    inspector = inspect(connection)
    if not inspector.has_table("task"):
        return None
    patch_columns = {column["name"] for column in inspector.get_columns("patch")}
    pr_columns = {column["name"] for column in inspector.get_columns("pull_request")}
    if "replay_of" in {column["name"] for column in inspector.get_columns("run")}:
        return "0006"
    if "intent" in {column["name"] for column in inspector.get_columns("task")}:
        return "0005"
    if "directory" in {column["name"] for column in inspector.get_columns("attempt")}:
        return "0004"
    if "forge" in pr_columns:
        return "0003"
    return "0002" if "tree_id" in patch_columns else "0001"


def _backup(path: Path | None) -> Path | None:
    """A consistent copy of an embedded database that holds tables, beside it."""
    if path is None or not path.exists():
        return None
    source = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS)
    try:
        has_tables = source.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        if not has_tables:
            return None
        target_path = _free_name(path.with_name(f"{path.name}.pre-{HEAD}.bak"))
        target = sqlite3.connect(target_path)
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()
    return target_path


def _free_name(path: Path) -> Path:
    candidate, number = path, 1
    while candidate.exists():
        candidate, number = path.with_name(f"{path.name}.{number}"), number + 1
    return candidate
