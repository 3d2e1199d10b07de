"""The directories of attempts that are over, removed by the next worker that starts: what a
process killed with -9 leaves in the temp dir. Kept apart from `leftovers.notice_expired`, which
the commands that only show runs call: they need none of the workspace code imported here."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from agentctl.domain.errors import AgentctlError
from agentctl.execution.workspaces.discard import ATTEMPT_DIR_PREFIX, remove_leftovers
from agentctl.execution.workspaces.trash import TRASH_PREFIX, sweep_trash


class DirectoryReads(Protocol):
    def ended_attempt_directories(self, directories: Sequence[str]) -> list[str]: ...


class SweptStore(Protocol):
    """The part of the storage port the sweep uses (any `Storage` is one): which of these
    directories belong to attempts that are over."""

    def reads(self) -> AbstractContextManager[DirectoryReads]: ...


class SweepStore(SweptStore, Protocol):
    """The sweep's port, and what an outage of the store looks like: the background sweep
    outlives one."""

    def outage_errors(self) -> tuple[type[BaseException], ...]: ...
    def outage_text(self, error: BaseException) -> str: ...


def sweep_attempt_directories(storage: SweptStore, parent: Path | None = None) -> int:
    """Remove this machine's directories of attempts that are over; how many were removed.
    Trash folders (attempts' directories renamed for deletion, left by a crash) go too.

    The folders agentctl makes in `parent` (the temp dir) are only candidates: one is removed
    when the store records it as the directory of an attempt that has ended, never one whose
    attempt still runs, nor one the store does not know (another home's, or not ours at all).
    A judge's scratch folder lives inside its attempt's directory and goes with it.
    """
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


def sweep_in_background(storage: SweepStore, report: Callable[[str], None]) -> threading.Thread:
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
