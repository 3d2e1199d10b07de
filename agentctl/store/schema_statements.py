"""The statements a new SQLite home is made by: what `tables.py` compiles to, written ahead
into `sqlite_schema.py` so that no command compiles them (nor imports SQLAlchemy to).

    python -m agentctl.store.schema_statements    # rewrites sqlite_schema.py (a test checks it is)
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.dialects.sqlite import pysqlite
from sqlalchemy.schema import CreateIndex, CreateTable

from agentctl.store.generated import module_text, write
from agentctl.store.tables import metadata


def sqlite_statements() -> tuple[str, ...]:
    """What `metadata.create_all` runs on a new SQLite database, in its order: each table
    (dependencies first), then that table's indexes."""
    dialect = pysqlite.dialect()
    made: list[str] = []
    for table in metadata.sorted_tables:
        made.append(str(CreateTable(table).compile(dialect=dialect)))
        made += [str(CreateIndex(index).compile(dialect=dialect))
                 for index in sorted(table.indexes, key=lambda index: str(index.name))]
    return tuple(made)


TARGET = Path(__file__).with_name("sqlite_schema.py")


def render() -> str:
    return module_text("python -m agentctl.store.schema_statements", "tables.py", "STATEMENTS",
                       "tuple[str, ...]", sqlite_statements())


if __name__ == "__main__":
    write(TARGET, render())
