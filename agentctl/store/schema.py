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
    if revision != HEAD:
        from agentctl.store.migrate import upgrade

        upgrade(engine, home, automatic=True)
    return engine
