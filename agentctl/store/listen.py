"""A worker's LISTEN connection to a PostgreSQL store: psycopg (the postgres extra) and
SQLAlchemy's URL parser, imported with this module by a worker on PostgreSQL only (`wakeup`)."""

from __future__ import annotations

from typing import Any

import psycopg
from sqlalchemy.engine import make_url


def listener(database_url: str, channel: str) -> psycopg.Connection[Any]:
    """An autocommit connection that LISTENs on `channel`."""
    url = make_url(database_url).set(drivername="postgresql")
    connection = psycopg.connect(url.render_as_string(hide_password=False), autocommit=True,
                                 connect_timeout=5)
    connection.execute(f"LISTEN {channel}")
    return connection
