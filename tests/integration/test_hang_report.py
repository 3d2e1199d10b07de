"""What a test still running near its timeout says of the processes below it."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.support.hang_report import _Watcher, report


def test_a_stopped_child_is_named_with_its_parent_state_and_command_line() -> None:
    child = subprocess.Popen(["sleep", "300"])
    try:
        child.send_signal(signal.SIGSTOP)
        deadline = time.monotonic() + 30
        while "T (stopped)" not in report("t") and time.monotonic() < deadline:
            time.sleep(0.02)
        line = next(line for line in report("t").splitlines() if line.startswith(f"{child.pid} "))
        assert f"ppid {os.getpid()} T (stopped)" in line and line.endswith(": sleep 300"), line
    finally:
        child.kill()
        child.wait()


def test_an_armed_watcher_reports_once_its_time_is_up_and_a_disarmed_one_never(
        capsys: pytest.CaptureFixture[str]) -> None:
    watcher = _Watcher()
    watcher.arm("tests/x.py::quick", 60)
    watcher.disarm()
    watcher.arm("tests/x.py::slow", 0.05)
    said, deadline = "", time.monotonic() + 30
    while "slow still runs" not in said and time.monotonic() < deadline:
        time.sleep(0.02)
        said += capsys.readouterr().err
    assert "--- tests/x.py::slow still runs: the processes below the test process ---" in said
    assert "quick" not in said
