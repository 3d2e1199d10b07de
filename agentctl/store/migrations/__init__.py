"""Alembic migrations of the store's schema (see `agentctl.store.migrate`)."""
