"""What the tests ask of processes: outcomes, however loaded the machine is."""

from __future__ import annotations

import os
import time


def group_is_gone(pgid: int, within: float = 30.0) -> bool:
    """Whether the process group is empty (its killed members reaped, which init may take a
    moment to do in a container): waited for, as an outcome, never a deadline."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
