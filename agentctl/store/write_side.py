"""The store's write side: the unit of work, its pending rows, the audit. `Store` imports this
module, once, for its first write or audit: `run show` loads `Store` for its lease check, which
writes only when a lease ran out, and so never loads these."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentctl.store.audit import verify_store
from agentctl.store.pending import PendingRows
from agentctl.store.uow import UnitOfWork

if TYPE_CHECKING:
    from agentctl.domain.audit_report import AuditReport
    from agentctl.store.storage import Store


class WriteSide:
    """What `Store` hands out for a write, made from the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def unit_of_work(self) -> UnitOfWork:
        return UnitOfWork(self.store.ensure_schema(), on_commit=self.store.signer.advance)

    def pending(self) -> PendingRows:
        return PendingRows()

    def audit(self) -> AuditReport:
        return verify_store(self.store)
