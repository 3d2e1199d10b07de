"""What a store raises when it, not the request, fails, and how to say so in one line.

Known without SQLAlchemy: a SQLite home's writes run on the stdlib driver and raise its errors
bare (a migration's, wrapped by SQLAlchemy, are unwrapped where it runs: `schema`).
"""

from __future__ import annotations

import sqlite3

from agentctl.domain.errors import StoreUnavailable


def outage_errors(*, postgresql: bool) -> tuple[type[BaseException], ...]:
    """Every error a store raises when it, not the request, fails: its driver's own classes,
    StoreUnavailable, and the disk's OSErrors (full, read-only); on PostgreSQL also
    SQLAlchemy's wrappers and psycopg's classes (its driver only for a PostgreSQL store:
    importing it costs more than a SQLite run's whole start-up). Whoever must outlive an outage
    catches these."""
    errors: list[type[BaseException]] = [StoreUnavailable, sqlite3.Error, OSError]
    if postgresql:
        from agentctl.store.postgres_errors import POSTGRES_ERRORS

        errors.extend(POSTGRES_ERRORS)
    return tuple(errors)


def outage_text(error: BaseException) -> str:
    """One line naming what failed, in the driver's or the system's words (not SQLAlchemy's
    wrapper, whose text carries the statement and a link)."""
    driver = getattr(error, "orig", None) or error
    if isinstance(driver, OSError) and driver.strerror:
        where = f" {driver.filename}" if driver.filename else ""
        return f"cannot write{where}: {driver.strerror}"
    words = str(driver).strip() or type(driver).__name__
    return words.splitlines()[0]
