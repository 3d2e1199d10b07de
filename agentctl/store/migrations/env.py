"""Alembic's environment: always run on the connection `agentctl.store.migrate` hands over.

That connection is already inside the write transaction that serializes concurrent upgrades
(BEGIN IMMEDIATE on SQLite, an advisory transaction lock on PostgreSQL), so the migrations and
the new revision stamp commit together or not at all.
"""

from __future__ import annotations

from alembic import context

from agentctl.store.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
