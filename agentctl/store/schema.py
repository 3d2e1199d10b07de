"""The schema a command finds: created on first use, brought to HEAD when behind.

Apart from `engine` (connections) and `migrate` (Alembic), which it uses in that order, so that
neither of those imports the other. A new SQLite home is made by the statements `tables.py`
compiles to, compiled ahead into `sqlite_schema.py`:

    python -m agentctl.store.schema     # rewrites sqlite_schema.py (a test checks it is)
"""

from __future__ import annotations

from pathlib import Path

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
    """A new SQLite database (not one table yet) gets HEAD's tables, as `tables.py` compiles
    to (`sqlite_schema.py`: the statements `create_all` runs, compiled ahead, which spares a
    new home their compilation), and HEAD's stamp, in one write transaction: what replaying
    the migrations builds (a test compares the two), without importing Alembic, which costs a
    new home more than its run's start-up. False, touching nothing, when the database is not
    new (a home made before migrations, or one another process made meanwhile): the migrations
    take it from there."""
    from agentctl.store.sqlite_schema import STATEMENTS

    with engine.begin() as connection:  # BEGIN IMMEDIATE: one process creates it
        if connection.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar():
            return False
        for statement in STATEMENTS:
            connection.exec_driver_sql(statement)
        connection.exec_driver_sql(  # as Alembic makes it
            "CREATE TABLE alembic_version (\n\tversion_num VARCHAR(32) NOT NULL, \n\t"
            "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)\n)")
        connection.exec_driver_sql("INSERT INTO alembic_version (version_num) VALUES (?)",
                                   (HEAD,))
    return True


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
