"""`Store` opens the database and the blob store; the schema is created by the first write, so a
command refused before it writes leaves no trace (not even an empty database). Commands that only
read never load it: they read through the views (`task_views`, `run_views`, `views`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentctl.home import Home
from agentctl.store import outages
from agentctl.store.blobs import BlobStore
from agentctl.store.checkpoint import AuditSigner
from agentctl.store.reads import StoreReads
from agentctl.store.revision import SchemaBehind
from agentctl.store.schema import ensure_schema, event_count
from agentctl.store.task_views import TaskViews
from agentctl.store.transactions import Database
from agentctl.store.write_side import WriteSide

if TYPE_CHECKING:
    from pathlib import Path

    from agentctl.domain.audit import Checkpoint
    from agentctl.domain.audit_report import AuditReport
    from agentctl.services.unit_of_work import IdKind
    from agentctl.store.pending import PendingRows
    from agentctl.store.uow import UnitOfWork


class Store:
    """The storage port (`services.unit_of_work.Storage`) on SQLite or PostgreSQL."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.blobs = BlobStore(home.artifacts)
        self.signer = AuditSigner(home.root)
        self._database: Database | None = None

    def ensure_schema(self) -> Database:
        if self._database is None:
            self._database = ensure_schema(self.home)
            if self.signer.key() is None and event_count(self._database) == 0:
                self.signer.create_key()  # a new log is signed from its first event
        return self._database

    def _write_side(self) -> WriteSide:
        """The write side: the unit of work, its pending rows, the audit."""
        return WriteSide(self, self.ensure_schema)

    def unit_of_work(self) -> UnitOfWork:
        return self._write_side().unit_of_work()

    def pending(self) -> PendingRows:
        """Inserts held for a later unit of work, encoded as they are added."""
        return self._write_side().pending()

    def reads(self) -> StoreReads:
        """Reads without a write transaction (and without importing SQLAlchemy); like every
        read, refused (SchemaBehind) on a database that is behind."""
        return StoreReads(self.home)

    @property
    def state_root(self) -> Path:
        return self.home.root

    def audit(self) -> AuditReport:
        return self._write_side().audit()

    def checkpoint(self) -> Checkpoint | None:
        return self.signer.read()

    def outage_errors(self) -> tuple[type[BaseException], ...]:
        return outages.outage_errors(postgresql=self.home.sqlite_path is None)

    def outage_text(self, error: BaseException) -> str:
        return outages.outage_text(error)

    def resolve(self, kind: IdKind, text: str) -> str:
        """The full id for a unique prefix, read without creating anything (NotFound if none).
        The first step of the use cases that write: a database that is behind is brought up
        first, as their first write would (SchemaBehind where only `db upgrade` may)."""
        try:
            views = TaskViews(self.home)
        except SchemaBehind:
            self.ensure_schema()
            views = TaskViews(self.home)
        with views:
            return views.resolve(kind, text)
