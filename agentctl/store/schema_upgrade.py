"""A database brought to the schema HEAD by the migrations: a PostgreSQL store, or a SQLite
home that is behind. Apart from `schema`, which every command that writes loads, so that only
these load SQLAlchemy and Alembic."""

from __future__ import annotations

import sqlite3

from sqlalchemy.exc import DBAPIError

from agentctl.home import Home
from agentctl.store.engine import database_for, engine_for, reconnecting
from agentctl.store.migrate import upgrade
from agentctl.store.revision import HEAD, revision_of
from agentctl.store.transactions import Database, sqlite_database


def upgraded(home: Home) -> Database:
    """The database of `home` at HEAD: a PostgreSQL store (`shared`), or a SQLite home that
    `schema.ensure_schema` found behind (`upgrade_sqlite`)."""
    path = home.sqlite_path
    if path is None:
        return shared(home)
    upgrade_sqlite(home)
    return sqlite_database(path)


def shared(home: Home) -> Database:
    """A PostgreSQL store: its engine's connections, brought up to HEAD first if behind."""
    database = database_for(home.database_url)
    with reconnecting(database.engine, database.engine.connect) as connection:
        revision = revision_of(connection)
    if revision != HEAD:
        upgrade(database.engine, home, automatic=True)
    return database


def upgrade_sqlite(home: Home) -> None:
    """Migrate a SQLite home that is behind, raising the driver's own errors as the rest of
    its writes do (SQLAlchemy wraps them: `outages` names the driver's)."""
    try:
        upgrade(engine_for(home.database_url), home, automatic=True)
    except DBAPIError as error:
        if isinstance(error.orig, sqlite3.Error):
            raise error.orig from error
        raise
