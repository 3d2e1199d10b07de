"""The lock the memory fake's queue and its ledgers write under, in a module of its own so
that both can import it without importing each other."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class Locked:
    """What `locked` may guard: the queue, and each of its ledgers, which hold the queue's lock."""

    lock: threading.RLock


def locked(method: Callable[P, T]) -> Callable[P, T]:
    """One writer at a time, as the store's transactions are."""
    @wraps(method)
    def locked(*args: P.args, **kwargs: P.kwargs) -> T:
        owner = args[0]
        assert isinstance(owner, Locked)
        with owner.lock:
            return method(*args, **kwargs)
    return locked
