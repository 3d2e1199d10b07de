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
_last_time_digits = ""
_digits_of = -2  # the random part `_random_digits` spells (ids made in one millisecond count up)
_random_digits = ""

PREFIXES = (
    "task", "session", "message", "run", "attempt", "lease", "worker", "step", "toolcall",
    "artifact", "patch", "verification", "judge", "verdict", "approval", "pr",
)
_KNOWN = frozenset(PREFIXES)


# Digits two at a time (10 bits per lookup), most significant first: the 50-bit time part
# (10 digits, the same for every id of a millisecond) and the 80-bit random part (16 digits).
_PAIRS = tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)
_TIME_SHIFTS = tuple(range(40, -1, -10))
_RANDOM_BITS = (1 << 80) - 1


def ulid() -> str:
    """A 26-character ULID; later calls in this process always sort after earlier ones."""
    global _last_ms, _last_random, _last_time_digits, _digits_of, _random_digits
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms <= _last_ms:
            _last_random += 1
            if _last_random > _RANDOM_BITS:  # the random part overflowed: carry into the time
                _last_random = 0
                _last_ms += 1
                _last_time_digits = _digits(_last_ms, _TIME_SHIFTS)
        else:
            _last_random = int.from_bytes(os.urandom(10), "big") >> 1  # room to increment
            _last_ms = now_ms
            _last_time_digits = _digits(now_ms, _TIME_SHIFTS)
        r, p = _last_random, _PAIRS
        if r - 1 == _digits_of and r & 1023:  # the id after the last: only its last pair changed
            digits = _random_digits[:14] + p[r & 1023]
        else:  # the 16 random digits, unrolled: the hot path of a busy agent
            digits = (p[r >> 70] + p[(r >> 60) & 1023] + p[(r >> 50) & 1023]
                      + p[(r >> 40) & 1023] + p[(r >> 30) & 1023] + p[(r >> 20) & 1023]
                      + p[(r >> 10) & 1023] + p[r & 1023])
        _digits_of, _random_digits = r, digits
        return _last_time_digits + digits


def _digits(value: int, shifts: tuple[int, ...]) -> str:
    return "".join([_PAIRS[(value >> shift) & 1023] for shift in shifts])


def new_id(prefix: str) -> str:
    if prefix not in _KNOWN:
        raise ValueError(f"unknown id prefix {prefix!r}")
    return f"{prefix}_{ulid()}"
