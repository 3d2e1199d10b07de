"""The `db` commands' work: which schema revision a store is at, and bringing it to this
agentctl's. Administration of the store itself, so it lives with the store."""

from __future__ import annotations

from dataclasses import dataclass

from agentctl.store.engine import engine_for
from agentctl.store.migrate import current as current_revision
from agentctl.store.migrate import upgrade as upgrade_schema
from agentctl.store.revision import HEAD
from agentctl.store.storage import Store


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaState:
    revision: str | None  # None: no schema yet (the first write creates it)
    head: str
    up_to_date: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaUpgrade:
    from_revision: str | None
    to_revision: str
    upgraded: bool
    backup: str | None  # the copy of an embedded database made before upgrading it


def current(store: Store) -> SchemaState:
    """Read only: a database that is behind is reported, not upgraded."""

    path = store.home.sqlite_path
    revision = None if path is not None and not path.exists() else \
        current_revision(engine_for(store.home.database_url))
    return SchemaState(revision=revision, head=HEAD, up_to_date=revision == HEAD)


def upgrade(store: Store) -> SchemaUpgrade:

    store.home.root.mkdir(parents=True, exist_ok=True)
    done = upgrade_schema(engine_for(store.home.database_url), store.home)
    return SchemaUpgrade(from_revision=done.from_revision, to_revision=done.to_revision,
                         upgraded=done.changed,
                         backup=None if done.backup is None else str(done.backup))
