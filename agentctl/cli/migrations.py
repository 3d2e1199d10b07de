"""The store's schema revision and its migration (`store.database`: SQLAlchemy's engine,
Alembic) for `db` and `doctor`, imported when one of them asks: their `--help` loads neither."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agentctl.store.database import SchemaState, SchemaUpgrade
    from agentctl.store.storage import Store


class Migrations(Protocol):
    """What the commands use of `store.database` (the module itself, once imported)."""

    def current(self, store: Store) -> SchemaState: ...
    def upgrade(self, store: Store) -> SchemaUpgrade: ...


def migrations() -> Migrations:
    from agentctl.store import database

    return database
