"""The RunQueue on any store (the storage port): the run use cases of `runs`, with reads."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.run import Run
from agentctl.services.lifecycle import runs
from agentctl.services.lifecycle.ledger import Ledger, LedgerStore, LedgerWork
from agentctl.services.ports import Blobs, Heartbeat, Lease, RunRecord


class QueueReads(Protocol):
    """What the loop reads outside a transaction: the run, its cancel flag, whether anything
    waits, and (for a replay's cassette) its record."""

    def run(self, text: str | None) -> Run: ...
    def cancel_request(self, run_id: str) -> tuple[str, str] | None: ...
    def waiting(self) -> bool: ...
    def record(self, run_id: str) -> RunRecord: ...


class QueueWork(runs.ClaimWork, runs.LeaseWork, LedgerWork, Protocol):
    """A claim's, a heartbeat's and an attempt's transactions: never a session, a message, an
    approval or a pull request, nor a new task or run."""


class QueueStore(runs.ClaimStore, runs.LeaseStore, runs.ReclaimStore, LedgerStore, Protocol):
    """The part of the storage port the worker loop and `run start` use (any `Storage` is one):
    the claims, heartbeats and reaping of `runs`, the attempt's ledger, a few reads, and what an
    outage of the store looks like. Not: resolving ids, the audit, the checkpoint."""

    def unit_of_work(self) -> AbstractContextManager[QueueWork]: ...
    def reads(self) -> AbstractContextManager[QueueReads]: ...
    def outage_errors(self) -> tuple[type[BaseException], ...]: ...
    def outage_text(self, error: BaseException) -> str: ...


class Queue:
    """A run's life around its attempts, for the worker loop and `run start`."""

    def __init__(self, storage: QueueStore, *, clock: Clock = utcnow) -> None:
        self.storage = storage
        self.clock = clock

    def now(self) -> datetime:
        return self.clock()

    def lease(self, *, worker_id: str, ttl_seconds: float,
              run_id: str | None = None) -> Lease | None:
        return runs.lease_run(self.storage, worker_id=worker_id, ttl_seconds=ttl_seconds,
                              run_id=run_id, clock=self.clock)

    def heartbeat(self, lease: Lease) -> Heartbeat:
        return runs.heartbeat(self.storage, lease, clock=self.clock)

    def reap_expired(self) -> list[Run]:
        return runs.reap_expired(self.storage, clock=self.clock)

    def run(self, run_id: str) -> Run:
        with self.storage.reads() as reads:
            return reads.run(run_id)

    def cancel_request(self, run_id: str) -> tuple[str, str] | None:
        with self.storage.reads() as reads:
            return reads.cancel_request(run_id)

    def waiting(self) -> bool:
        """Queued runs, or runs another worker holds (they may come back to the queue)."""
        with self.storage.reads() as reads:
            return reads.waiting()

    def outage_errors(self) -> tuple[type[BaseException], ...]:
        return self.storage.outage_errors()

    def outage_text(self, error: BaseException) -> str:
        return self.storage.outage_text(error)

    def ledger(self, lease: Lease, spec_digest: str, *,
               blobs: Callable[[Blobs], Blobs] | None = None) -> Ledger:
        return Ledger(self.storage, lease, spec_digest=spec_digest, clock=self.clock,
                      blobs=None if blobs is None else blobs(self.storage.blobs))

    def record(self, run_id: str) -> RunRecord:
        with self.storage.reads() as reads:
            return reads.record(run_id)
