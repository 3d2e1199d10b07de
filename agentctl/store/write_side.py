"""The store's write side: the unit of work, its pending rows, the audit. `Store` imports this
module, once, for its first write or audit: `run show` loads `Store` for its lease check, which
writes only when a lease ran out, and so never loads these."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agentctl.store.audit import AuditedStore, verify_store
from agentctl.store.pending import PendingRows
from agentctl.store.uow import UnitOfWork

if TYPE_CHECKING:
    from agentctl.domain.audit_report import AuditReport
    from agentctl.store.transactions import Database


class WriteSide:
    """What `Store` hands out for a write: made from the store (as the audit reads it) and its
    schema's first write (`Store.ensure_schema`)."""

    def __init__(self, store: AuditedStore, ensure_schema: Callable[[], Database]) -> None:
        self.store = store
        self.ensure_schema = ensure_schema

    def unit_of_work(self) -> UnitOfWork:
        return UnitOfWork(self.ensure_schema(), on_commit=self.store.signer.advance)

    def pending(self) -> PendingRows:
        return PendingRows()

    def audit(self) -> AuditReport:
        return verify_store(self.store)
