"""The schema revision this agentctl needs, and the cheap check of a database's own.

No Alembic and no SQLAlchemy here: every command checks the revision with a query or two, and
only a database that is behind pays for importing the migration machinery
(`agentctl.store.migrate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentctl.domain.errors import AgentctlError

if TYPE_CHECKING:
    from sqlalchemy import Connection

HEAD = "0006"
"""The newest migration under `migrations/versions`; a test checks it is Alembic's head."""



class SchemaBehind(AgentctlError):
    """The database is at an older schema revision than this agentctl needs (exit 2)."""


_TABLE_EXISTS = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'",
    "postgresql": "SELECT to_regclass('alembic_version')",
}


def stored_revision(cursor: Any, dialect: str) -> str | None:
    """The revision the database behind a DB-API cursor is at; None when it records none (a new
    database, or one made before migrations existed)."""
    cursor.execute(_TABLE_EXISTS[dialect])
    found = cursor.fetchone()
    if found is None or found[0] is None:
        return None
    cursor.execute("SELECT version_num FROM alembic_version")
    row = cursor.fetchone()
    return None if row is None else str(row[0])


def revision_of(connection: Connection) -> str | None:
    """The schema revision the connection's database records, read with the driver alone."""
    cursor = connection.connection.cursor()
    try:
        return stored_revision(cursor, connection.dialect.name)
    finally:
        cursor.close()
