"""What ties git (and an unconfined command) to the process that started it: a death signal,
and the locks git inherits.
Real processes: a Python process killed with SIGKILL, a shell standing in for git's helpers."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentctl.execution import lifelines
from agentctl.execution.git import run_git_process

STARTERS = {
    "git": """\
import os, sys
from agentctl.execution.git import run_git_process
run_git_process(["sh", "-c", f"echo $$ > {sys.argv[1]}; exec sleep 60"], env=os.environ,
                what="sleep", timeout=120)
""",
    "command": """\
import os, sys
from pathlib import Path
from agentctl.execution.process import run_to_file
run_to_file(f"echo $$ > {sys.argv[1]}; exec sleep 60", cwd=Path.cwd(), env=dict(os.environ),
            output=Path(sys.argv[1] + ".out"), timeout=120)
""",
}


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


def _locked(path: Path) -> bool:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False


@pytest.mark.parametrize("runner", sorted(STARTERS))
def test_a_process_git_or_a_command_runs_is_killed_when_the_process_that_started_it_is(
        tmp_path: Path, runner: str) -> None:
    pid_file = tmp_path / "pid"
    starter = subprocess.Popen([sys.executable, "-c", STARTERS[runner], str(pid_file)],
                               cwd=tmp_path)
    started = 0
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text().strip():
            assert time.monotonic() < deadline and starter.poll() is None, "git never started"
            time.sleep(0.02)
        started = int(pid_file.read_text())
        starter.kill()
        starter.wait()
        deadline = time.monotonic() + 30
        while not _gone(started) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _gone(started), "git outlived the process that started it"
    finally:
        starter.kill()
        if started and not _gone(started):
            os.kill(started, signal.SIGKILL)


def test_git_and_its_helpers_hold_a_lock_held_while_they_were_started(tmp_path: Path) -> None:
    lock = tmp_path / "build"
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    with lifelines.holding(descriptor):
        helper = run_git_process(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"],
                                 env=os.environ, what="helper")
    later = run_git_process(["true"], env=os.environ, what="after")
    helper_pid = int(helper.stdout)
    try:
        os.close(descriptor)  # the builder is gone; its helper is not
        assert later.returncode == 0 and lifelines.held() == ()
        assert _locked(lock)
    finally:
        os.kill(helper_pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while _locked(lock) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _locked(lock)
