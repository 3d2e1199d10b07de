"""The schema a command finds: created on first use, brought to HEAD when behind.

Apart from `engine` (connections) and `migrate` (Alembic), which it uses in that order, so that
neither of those imports the other.
"""

from __future__ import annotations

from sqlalchemy import Engine

from agentctl.home import Home
from agentctl.store.engine import engine_for
from agentctl.store.revision import HEAD, revision_of


def ensure_schema(home: Home) -> Engine:
    """Create the home on first use and bring its database to the schema this agentctl needs;
    one cheap query when it is there already (Alembic is imported only when it is not)."""
    home.root.mkdir(parents=True, exist_ok=True)
    engine = engine_for(home.database_url)
    with engine.connect() as connection:
        revision = revision_of(connection)
    if revision != HEAD and not (home.sqlite_path is not None and _create_new(engine)):
        from agentctl.store.migrate import upgrade

        upgrade(engine, home, automatic=True)
    return engine


def _create_new(engine: Engine) -> bool:
    """A new SQLite database (not one table yet) gets HEAD's tables straight from `tables.py`
    and HEAD's stamp, in one write transaction: what replaying the migrations builds (a test
    compares the two), without importing Alembic, which costs a new home more than its run's
    start-up. False, touching nothing, when the database is not new (a home made before
    migrations, or one another process made meanwhile): the migrations take it from there."""
    from agentctl.store.tables import metadata

    with engine.begin() as connection:  # BEGIN IMMEDIATE: one process creates it
        if connection.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar():
            return False
        metadata.create_all(connection)
        connection.exec_driver_sql(  # as Alembic makes it
            "CREATE TABLE alembic_version (\n\tversion_num VARCHAR(32) NOT NULL, \n\t"
            "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)\n)")
        connection.exec_driver_sql("INSERT INTO alembic_version (version_num) VALUES (?)",
                                   (HEAD,))
    return True
