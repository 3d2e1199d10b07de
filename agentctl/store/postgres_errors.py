"""What a PostgreSQL store raises when it, not the request, fails: SQLAlchemy's wrapper and
psycopg's classes. Imported by `outages` for a PostgreSQL store only: the driver's import alone
costs more than a SQLite run's whole start-up."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError

POSTGRES_ERRORS: tuple[type[BaseException], ...]
try:
    import psycopg
except ImportError:  # no PostgreSQL driver: no PostgreSQL store either
    POSTGRES_ERRORS = (DBAPIError,)
else:
    POSTGRES_ERRORS = (DBAPIError, psycopg.Error)
