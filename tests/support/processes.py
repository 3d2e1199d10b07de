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


def running(*argv: str) -> bool:
    """Whether a process with exactly this command line runs now (on this machine, in any pid
    namespace: a sandboxed check's process shows here too)."""
    wanted = "\0".join(argv).encode() + b"\0"
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if cmdline.read() == wanted:
                        return True
            except OSError:  # gone meanwhile, or not ours to read
                continue
    return False
