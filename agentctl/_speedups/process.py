"""The installed command's process: the garbage collector's pace and a quick way out.

Only the installed `agentctl` command uses these (`cli/main.py:command`), never a use case and
never an in-process caller (tests keep their interpreter as it was). Under `AGENTCTL_PLAIN=1`
the collector keeps CPython's pace and the command leaves through `sys.exit` with the
interpreter's full teardown.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import NoReturn

from agentctl._speedups import PLAIN

GC_YOUNG_THRESHOLD = 100_000
"""Allocations between two collections of the youngest generation while the command starts
(CPython's default, 700, is restored when the start-up is done)."""

_starting: tuple[int, int, int] | None = None  # the thresholds to restore, while starting


def collect_less() -> None:
    """No cyclic garbage collection while the command starts: its start-up makes hundreds of
    thousands of long-lived objects (modules, classes, dataclasses' generated methods), and at
    CPython's default every 700 of them set off a collection that frees nothing: ~35 ms of a
    run's CPU, before its first check can start. Reference counting still frees everything
    not in a cycle at once."""
    global _starting
    if PLAIN:
        return
    _starting = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *_starting[1:])


def start_up_done() -> None:
    """A command about to do long work (a run, a worker) says its start-up is over: what exists
    now lives as long as the process, so it is frozen out of every later collection (a full
    collection while a run's rows are written then walks only what the run made, not the
    start-up's modules and classes), and collections go back to CPython's pace for the work
    that follows (an agent may call tools for hours). A no-op unless `collect_less` ran, and
    after the first call."""
    global _starting
    if _starting is None:
        return
    gc.freeze()
    gc.set_threshold(*_starting)
    _starting = None


def leave(code: object) -> NoReturn:
    """End the process with `code` (what `SystemExit` carried) without the interpreter's
    teardown: freeing every module's objects one by one costs tens of milliseconds after the
    work is done (a run's verdict already printed). What that teardown does that matters is
    done here: non-daemon threads waited for (by falling back to it), exit handlers run (the
    store's among them: its database connections closed, the WAL checkpointed), the output
    flushed."""
    if PLAIN or any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
                    if thread is not threading.main_thread()):
        sys.exit(code)  # type: ignore[arg-type]
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to say
            pass
    os._exit(code)
