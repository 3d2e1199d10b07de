"""`python -I -m agentctl.execution.agents.guardian -- ARGV...`: runs a native agent CLI so that nothing
it started can outlive the agentctl process that launched it, even a `kill -9` of that one.

The guardian is a child subreaper (orphans of the agent are re-parented to it, not to init)
and asks the kernel for a signal when its parent dies. When the agent exits, when it is told to
stop, or when its parent is gone, it kills every process below it and exits. Stdlib only.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

from agentctl.execution.reaper import become_subreaper, sweep

_PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.2


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.stderr.write("agentctl guardian: no command given\n")
        return 2
    parent = os.getppid()
    become_subreaper()
    _die_with_parent()
    stopping: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        stopping.append(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    if os.getppid() != parent:  # the parent died before the kernel was told
        return 1
    try:
        child = subprocess.Popen(args)
    except OSError as error:
        sys.stderr.write(f"agentctl: {args[0]}: cannot start: {error.strerror or error}\n")
        return 127
    code: int | None = None
    while code is None and not stopping and os.getppid() == parent:
        try:
            code = child.wait(timeout=POLL_SECONDS)
        except subprocess.TimeoutExpired:
            continue
    sweep()
    if code is None:
        child.wait()
        return 128 + (stopping[0] if stopping else signal.SIGKILL)
    return code


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the parent's own sweep is all there is


if __name__ == "__main__":
    sys.exit(main())
