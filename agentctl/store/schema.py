"""The schema a command finds: created on first use, brought to HEAD when behind.

A new SQLite home is made by the statements `tables.py` compiles to, compiled ahead into
`sqlite_schema.py` (by `schema_statements`), on the stdlib driver; only a database that is
behind, or a PostgreSQL store, imports the migration machinery (`schema_upgrade`: Alembic on
SQLAlchemy's engine).
"""

from __future__ import annotations

import sqlite3

from agentctl.home import Home
from agentctl.store.revision import HEAD, stored_revision
from agentctl.store.sqlite_schema import STATEMENTS
from agentctl.store.transactions import (
    Database,
    begin_immediate,
    sqlite_database,
    when_unlocked,
)


def ensure_schema(home: Home) -> Database:
    """Create the home on first use and bring its database to the schema this agentctl needs;
    one cheap query when it is there already (Alembic is imported only when it is not)."""
    home.root.mkdir(parents=True, exist_ok=True)
    path = home.sqlite_path
    if path is not None:
        database = sqlite_database(path)
        connection = database.connect()
        try:
            # the first read of a database this connection may just have switched to WAL
            revision = when_unlocked(stored_revision, connection.cursor(), "sqlite")
            if revision == HEAD or _create_new(connection):
                return database
        finally:
            connection.close()
    # a PostgreSQL store, or a SQLite home that is behind: SQLAlchemy's engine, Alembic
    from agentctl.store.schema_upgrade import upgraded

    return upgraded(home)


def _create_new(connection: sqlite3.Connection) -> bool:
    """A new SQLite database (not one table yet) gets HEAD's tables, as `tables.py` compiles
    to (`sqlite_schema.py`: the statements `create_all` runs, compiled ahead, which spares a
    new home their compilation), and HEAD's stamp, in one write transaction: what replaying
    the migrations builds (a test compares the two), without importing Alembic, which costs a
    new home more than its run's start-up. False, touching nothing, when the database is not
    new (a home made before migrations, or one another process made meanwhile): the migrations
    take it from there."""
    begin_immediate(connection)  # one process creates it
    try:
        if connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            connection.rollback()
            return False
        for statement in STATEMENTS:
            connection.execute(statement)
        connection.execute(  # as Alembic makes it
            "CREATE TABLE alembic_version (\n\tversion_num VARCHAR(32) NOT NULL, \n\t"
            "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)\n)")
        connection.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (HEAD,))
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
    return True


def event_count(database: Database) -> int:
    transaction = database.begin()
    try:
        cursor = transaction.cursor()
        cursor.execute("SELECT count(*) FROM event")
        return int(cursor.fetchone()[0] or 0)
    finally:
        transaction.rollback()
        transaction.close()
