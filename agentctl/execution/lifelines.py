"""What ties a started git (or an unconfined command) to the worker that started it, when
nothing of the worker is left to end it (SIGKILL, an out-of-memory kill). A sandboxed command
has bubblewrap's `--die-with-parent` instead.

- A death signal: git is started through `setpriv --pdeathsig KILL`, which asks the kernel to
  SIGKILL it when the thread that started it ends, then executes git (the signal outlives the
  exec). Not a `preexec_fn`: that is unsafe beside threads, and forking a worker's memory for it
  cost 6 ms a call against setpriv's 1 ms. Where setpriv is missing or too old, none is given.
- Held locks: the descriptor of a lock the caller holds (a cache build's) is inherited by every
  git started meanwhile, and by git's own helpers, so the lock stays held until the last process
  of a dead builder has ended: whoever takes it next finds nobody still writing.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import threading
from collections.abc import Iterator, Sequence
from functools import cache

_DEATH_SIGNAL = ("--pdeathsig", "KILL", "--")
_held_lock = threading.Lock()
_held: dict[int, int] = {}  # descriptor -> how many blocks hold it


def tied(argv: Sequence[str]) -> list[str]:
    """`argv` started so that it is killed when the thread starting it ends."""
    wrapper = _setpriv()
    return [wrapper, *_DEATH_SIGNAL, *argv] if wrapper else list(argv)


def tied_if_found(argv: Sequence[str], search_path: str | None) -> list[str]:
    """`argv` tied (as `tied`) when its program is found on `search_path` and may be executed;
    else as it is, so that starting it fails as it would have (and is said the same way)."""
    found = shutil.which(argv[0], path=search_path) if argv else None
    return tied(argv) if found is not None else list(argv)


@cache
def _setpriv() -> str | None:
    """setpriv's path when it gives a death signal (util-linux 2.33 and later), probed once."""
    found = shutil.which("setpriv")
    if found is None:
        return None
    try:
        probe = subprocess.run([found, *_DEATH_SIGNAL, "true"], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if probe.returncode == 0 else None


@contextlib.contextmanager
def holding(descriptor: int) -> Iterator[None]:
    """Every git started inside (on any thread) inherits `descriptor`, a lock's."""
    with _held_lock:
        _held[descriptor] = _held.get(descriptor, 0) + 1
    try:
        yield
    finally:
        with _held_lock:
            _held[descriptor] -= 1
            if not _held[descriptor]:
                del _held[descriptor]


def held() -> tuple[int, ...]:
    """The descriptors a git started now inherits."""
    with _held_lock:
        return tuple(_held)
