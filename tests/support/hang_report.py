"""A test still running shortly before its timeout writes the processes below it to its captured
stderr: each one's state, the kernel function it waits in, its age and command line.

pytest-timeout shows only the test process's own stacks; a test that hangs waiting for a child
shows a wait on a pidfd and nothing of why the child waits (stopped, blocked on a pipe, on a
lock, or busy). One watcher thread a test process, armed for each test's call.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from agentctl.execution.reaper import descendants

AHEAD_SECONDS = 30  # before the test's timeout


class _Watcher:
    def __init__(self) -> None:
        self._armed = threading.Condition()
        self._deadline: float | None = None
        self._test = ""
        threading.Thread(target=self._watch, name="hang-report", daemon=True).start()

    def arm(self, test: str, seconds: float) -> None:
        with self._armed:
            self._deadline, self._test = time.monotonic() + seconds, test
            self._armed.notify()

    def disarm(self) -> None:
        with self._armed:
            self._deadline = None
            self._armed.notify()

    def _watch(self) -> None:
        while True:
            with self._armed:
                while self._deadline is None or self._deadline > time.monotonic():
                    left = None if self._deadline is None else self._deadline - time.monotonic()
                    self._armed.wait(left)
                test, self._deadline = self._test, None
            sys.stderr.write(report(test))
            sys.stderr.flush()


def report(test: str) -> str:
    """The processes below this one, a line each, oldest first."""
    lines = [f"--- {test} still runs: the processes below the test process ---"]
    up = float(_text("/proc/uptime").split()[0])
    ticks = os.sysconf("SC_CLK_TCK")
    for pid, started in sorted(descendants(), key=lambda process: process[1]):
        lines.append(described(pid, up - started / ticks))
    return "\n".join(lines) + "\n"


def described(pid: int, age: float) -> str:
    """`PID ppid PPID STATE wchan FUNCTION age SECONDS: COMMAND LINE` from /proc."""
    status = dict(line.split(":", 1) for line in _read(pid, "status").splitlines() if ":" in line)
    command = _read(pid, "cmdline").replace("\0", " ").strip()[:300]
    return (f"{pid} ppid {status.get('PPid', '?').strip()} {status.get('State', '?').strip()} "
            f"wchan {_read(pid, 'wchan') or '-'} age {age:.0f}s: {command}")


def _read(pid: int, name: str) -> str:
    return _text(f"/proc/{pid}/{name}")


def _text(path: str) -> str:
    try:
        with open(path, "rb") as file:
            return file.read().decode("utf-8", "replace")
    except OSError:
        return ""


_watcher: _Watcher | None = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    global _watcher
    marker = item.get_closest_marker("timeout")
    limit = float(marker.args[0] if marker and marker.args else item.config.getini("timeout") or 0)
    if limit > AHEAD_SECONDS:
        _watcher = _watcher or _Watcher()
        _watcher.arm(item.nodeid, limit - AHEAD_SECONDS)
    try:
        yield
    finally:
        if _watcher is not None:
            _watcher.disarm()
