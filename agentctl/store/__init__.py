"""Persistence. `Store` opens the database (creating the schema on first use) and the blob store.

Only this package imports SQLModel/SQLAlchemy; read-only commands use `views`, which does not.
"""

from __future__ import annotations

from agentctl.store.location import Home


class Store:
    def __init__(self, home: Home) -> None:
        from agentctl.store.blobs import BlobStore
        from agentctl.store.engine import ensure_schema

        self.home = home
        self._engine = ensure_schema(home)
        self.blobs = BlobStore(home.artifacts)

    def unit_of_work(self):  # type: ignore[no-untyped-def]
        from agentctl.store.uow import UnitOfWork

        return UnitOfWork(self._engine)
