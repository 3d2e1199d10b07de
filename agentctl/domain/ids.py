"""Prefixed ULIDs (`task_01JZ9T...`): sortable by creation time, unique without coordination.

Generated here with the standard library so the domain stays free of third-party imports, and
monotonic within a process so that records made in the same millisecond still sort in order.
"""

from __future__ import annotations

import os
import threading
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last_ms = 0
_last_random = 0

PREFIXES = (
    "task", "session", "message", "run", "attempt", "lease", "worker", "step", "toolcall",
    "artifact", "patch", "verification", "judge", "verdict", "approval", "pr",
)


# 26 digits of a 130-bit number, two at a time (10 bits per lookup), most significant first.
_PAIRS = tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)
_SHIFTS = tuple(range(120, -1, -10))


def ulid() -> str:
    """A 26-character ULID; later calls in this process always sort after earlier ones."""
    global _last_ms, _last_random
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms <= _last_ms:
            now_ms = _last_ms
            _last_random += 1
        else:
            _last_random = int.from_bytes(os.urandom(10), "big") >> 1  # room to increment
        _last_ms = now_ms
        value = (now_ms << 80) | (_last_random & ((1 << 80) - 1))
        return "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS])


def new_id(prefix: str) -> str:
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}")
    return f"{prefix}_{ulid()}"
