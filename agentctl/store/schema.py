"""The schema a command finds: created on first use, brought to HEAD when behind.

A new SQLite home is made by the statements `tables.py` compiles to, compiled ahead into
`sqlite_schema.py`, on the stdlib driver; only a database that is behind imports the migration
machinery (`migrate`: Alembic on SQLAlchemy's engine, `engine`).

    python -m agentctl.store.schema     # rewrites sqlite_schema.py (a test checks it is)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentctl.home import Home
from agentctl.store.revision import HEAD, revision_of, stored_revision
from agentctl.store.transactions import Database, begin_immediate, sqlite_database


def ensure_schema(home: Home) -> Database:
    """Create the home on first use and bring its database to the schema this agentctl needs;
    one cheap query when it is there already (Alembic is imported only when it is not)."""
    home.root.mkdir(parents=True, exist_ok=True)
    path = home.sqlite_path
    if path is None:
        return _shared(home)
    database = sqlite_database(path)
    connection = database.connect()
    try:
        revision = stored_revision(connection.cursor(), "sqlite")
        if revision == HEAD or _create_new(connection):
            return database
    finally:
        connection.close()
    _upgrade_sqlite(home)
    return database


def _shared(home: Home) -> Database:
    """A PostgreSQL store: its engine's connections, brought up to HEAD first if behind."""
    from agentctl.store.engine import database_for, reconnecting

    database = database_for(home.database_url)
    with reconnecting(database.engine, database.engine.connect) as connection:
        revision = revision_of(connection)
    if revision != HEAD:
        from agentctl.store.migrate import upgrade

        upgrade(database.engine, home, automatic=True)
    return database


def _upgrade_sqlite(home: Home) -> None:
    """Migrate a SQLite home that is behind, raising the driver's own errors as the rest of
    its writes do (SQLAlchemy wraps them: `outages` names the driver's)."""
    from sqlalchemy.exc import DBAPIError

    from agentctl.store.engine import engine_for
    from agentctl.store.migrate import upgrade

    try:
        upgrade(engine_for(home.database_url), home, automatic=True)
    except DBAPIError as error:
        if isinstance(error.orig, sqlite3.Error):
            raise error.orig from error
        raise


def _create_new(connection: sqlite3.Connection) -> bool:
    """A new SQLite database (not one table yet) gets HEAD's tables, as `tables.py` compiles
    to (`sqlite_schema.py`: the statements `create_all` runs, compiled ahead, which spares a
    new home their compilation), and HEAD's stamp, in one write transaction: what replaying
    the migrations builds (a test compares the two), without importing Alembic, which costs a
    new home more than its run's start-up. False, touching nothing, when the database is not
    new (a home made before migrations, or one another process made meanwhile): the migrations
    take it from there."""
    from agentctl.store.sqlite_schema import STATEMENTS

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


def sqlite_statements() -> tuple[str, ...]:
    """What `metadata.create_all` runs on a new SQLite database, in its order: each table
    (dependencies first), then that table's indexes."""
    from sqlalchemy.dialects.sqlite import pysqlite
    from sqlalchemy.schema import CreateIndex, CreateTable

    from agentctl.store.tables import metadata

    dialect = pysqlite.dialect()
    made: list[str] = []
    for table in metadata.sorted_tables:
        made.append(str(CreateTable(table).compile(dialect=dialect)))
        made += [str(CreateIndex(index).compile(dialect=dialect))
                 for index in sorted(table.indexes, key=lambda index: str(index.name))]
    return tuple(made)


TARGET = Path(__file__).with_name("sqlite_schema.py")


def render() -> str:
    from agentctl.store.generated import module_text  # the writer's, not a command's

    return module_text("python -m agentctl.store.schema", "tables.py", "STATEMENTS",
                       "tuple[str, ...]", sqlite_statements())


if __name__ == "__main__":
    from agentctl.store.generated import write

    write(TARGET, render())
