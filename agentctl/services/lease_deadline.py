"""How long a worker may still wait on its database: until the lease it holds runs out.

A store that retries a lost connection gives up by then, and tries often enough to be back in
time, rather than holding a heartbeat past the lease it was meant to keep (the attempt would
then be taken over and done again). Set per thread (a context variable): the attempt's and its
heartbeat's threads each run inside `bounded_by`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_expires: ContextVar[Callable[[], float] | None] = ContextVar("lease_expires", default=None)


@contextmanager
def bounded_by(expires: Callable[[], float]) -> Iterator[None]:
    """Inside, `seconds_left` counts down to `expires()` (a `time.monotonic` instant, asked
    each time: a heartbeat moves it on)."""
    token = _expires.set(expires)
    try:
        yield
    finally:
        _expires.reset(token)


def seconds_left() -> float | None:
    """Seconds until the lease in force here runs out (0 or less: it has); None outside one."""
    expires = _expires.get()
    return None if expires is None else expires() - time.monotonic()
