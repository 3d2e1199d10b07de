"""What a process killed with -9 leaves behind, found by the next agentctl that looks: runs
whose lease ran out while nobody watched (a foreground `run start` that died, with no worker
around to reclaim its lease). The directories of attempts that are over are `sweep`'s."""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import RunStatus
from agentctl.domain.run import Run

if TYPE_CHECKING:  # the write path's types: `runs` itself is imported only when a lease ran out
    from agentctl.services.lifecycle.runs import ReclaimWork


class DueReads(Protocol):
    def lease_due(self, now: datetime) -> bool: ...


class NoticeStore(Protocol):
    """The part of the storage port noticing expired leases uses (any `Storage` is one): the
    one cheap read, and what reaping them takes (a `runs.ReclaimStore`), outages included."""

    def reads(self) -> AbstractContextManager[DueReads]: ...
    def unit_of_work(self) -> AbstractContextManager[ReclaimWork]: ...
    def outage_errors(self) -> tuple[type[BaseException], ...]: ...


def notice_expired(storage: NoticeStore, *, clock: Clock = utcnow) -> list[Run]:
    """Reclaim every lease that ran out, if there is one (the run then goes back to the queue or
    ends, as its budget says, and its attempt's directory is removed); the runs that went back
    to the queue, which only a worker takes up (`requeued_notice` says so); none while the store
    cannot be written. One indexed read when there is none: commands that show runs call it
    first."""
    with storage.reads() as reads:
        due = reads.lease_due(clock())
    if not due:
        return []
    from agentctl.services.lifecycle.runs import reap_expired  # the write path: only when needed

    try:
        reaped = reap_expired(storage, clock=clock)
    except storage.outage_errors():
        # a full disk, a read-only home: the command only meant to read, and still does; the
        # next command or worker that can write reclaims the lease
        return []
    return [run for run in reaped if run.status is RunStatus.QUEUED]


def requeued_notice(run: Run) -> str:
    """The line for a run `notice_expired` sent back to the queue: its `run start` died (or its
    worker did), and without a worker nothing takes it up again."""
    return f"run {run.run_id} was requeued: it needs a worker (agentctl worker --once)"
