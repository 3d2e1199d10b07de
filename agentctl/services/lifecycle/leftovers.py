"""What a process killed with -9 leaves behind, found by the next agentctl that looks: the
directories of attempts that are over, and runs whose lease ran out while nobody watched (a
foreground `run start` that died, with no worker around to reclaim its lease)."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import RunStatus
from agentctl.domain.run import Run
from agentctl.domain.errors import AgentctlError
from agentctl.services.unit_of_work import Storage


class DirectoryReads(Protocol):
    def ended_attempt_directories(self, directories: Sequence[str]) -> list[str]: ...


class SweptStore(Protocol):
    """The part of the storage port the sweep uses (any `Storage` is one): which of these
    directories belong to attempts that are over."""

    def reads(self) -> AbstractContextManager[DirectoryReads]: ...


def sweep_attempt_directories(storage: SweptStore, parent: Path | None = None) -> int:
    """Remove this machine's directories of attempts that are over; how many were removed.
    Trash folders (attempts' directories renamed for deletion, left by a crash) go too.

    The folders agentctl makes in `parent` (the temp dir) are only candidates: one is removed
    when the store records it as the directory of an attempt that has ended, never one whose
    attempt still runs, nor one the store does not know (another home's, or not ours at all).
    A judge's scratch folder lives inside its attempt's directory and goes with it.
    """
    # here, not above: the commands that only call notice_expired need none of the workspace code
    from agentctl.execution.workspaces.discard import ATTEMPT_DIR_PREFIX, TRASH_PREFIX, remove_leftovers
    from agentctl.execution.workspaces.trash import sweep_trash

    folder = (parent or Path(tempfile.gettempdir())).resolve()
    sweep_trash(folder, TRASH_PREFIX)
    try:
        with os.scandir(folder) as entries:
            candidates = [entry.path for entry in entries
                          if entry.name.startswith(ATTEMPT_DIR_PREFIX)
                          and entry.is_dir(follow_symlinks=False)]
    except OSError:  # no temp dir to look in: nothing of ours is there either
        return 0
    with storage.reads() as reads:
        ended = reads.ended_attempt_directories(candidates)
    remove_leftovers(ended)
    return len(ended)


def sweep_in_background(storage: Storage, report: Callable[[str], None]) -> threading.Thread:
    """The sweep in a thread of its own, so a worker starts working at once however many
    directories there are (removing a thousand clones takes minutes on a slow disk); `report`
    hears how many were removed, or why the sweep could not look. A daemon: join it to wait."""
    def sweep() -> None:

        faults: tuple[type[BaseException], ...] = (AgentctlError, *storage.outage_errors())
        try:
            swept = sweep_attempt_directories(storage)
        except faults as error:  # the next worker start tries again
            report(f"sweep of ended attempts' directories skipped: {storage.outage_text(error)}")
            return
        if swept:
            report(f"removed {swept} directories of attempts that had ended")

    thread = threading.Thread(target=sweep, name="agentctl-sweep", daemon=True)
    thread.start()
    return thread


def notice_expired(storage: Storage, *, clock: Clock = utcnow) -> list[Run]:
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
