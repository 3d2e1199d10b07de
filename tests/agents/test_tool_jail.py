"""The route a native shell call takes, without a CLI around it: the stub the hook hands the CLI
(shell words naming one-shot FIFOs) is run by bash, and the attempt runs the command in a real
bubblewrap jail writing into the stub's FIFOs. A stub works once; killing it (the CLI stopping
the call) kills the jailed command."""

from __future__ import annotations

import errno
import os
import shlex
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.domain.sandbox import SandboxProfile
from agentctl.execution.agents.tool_jail import ToolJails
from agentctl.execution.sandboxing.sandbox import Sandbox


class Route:
    """An attempt's tool jails; what ended is drained on a thread as the attempt does."""

    def __init__(self, root: Path) -> None:
        self.workspace = root / "workspace"
        (self.workspace / "sub").mkdir(parents=True)
        private = root / "private"
        private.mkdir()
        (root / "proxy").mkdir()
        self.sandbox = Sandbox.for_attempt(SandboxProfile(), env=dict(os.environ),
                                           hidden=[private], proxy_dir=root / "proxy")
        self.calls = root / "agent-home" / ".agentctl" / "calls"
        self.jails = ToolJails(self.sandbox, self.workspace, {"PATH": os.environ["PATH"]},
                               self.calls)
        self.ran: list[tuple[str, int | None]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._done.is_set():
            time.sleep(0.02)
            self.ran += [(done.command, done.exit_code) for done in self.jails.drain()]

    def stub(self, command: str) -> str:
        """What the hook would have the CLI run instead of `command`."""
        replaced = self.jails.replace({"command": command, "description": "kept"})
        assert replaced is not None and replaced["description"] == "kept"
        return str(replaced["command"])

    def close(self) -> None:
        self.jails.close()
        self._done.set()
        self._thread.join()
        self.sandbox.close()


@pytest.fixture
def route(tmp_path: Path) -> Iterator[Route]:
    live = Route(tmp_path)
    yield live
    live.close()


def run(stub: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/bash", "-c", stub], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_the_command_runs_jailed_with_its_output_exit_code_and_directory(route: Route) -> None:
    done = run(route.stub("pwd; echo to-err >&2; exit 7"), route.workspace / "sub")
    assert done.returncode == 7, done.stderr
    assert done.stdout == f"{route.workspace / 'sub'}\n"
    assert done.stderr == "to-err\n"
    deadline = time.monotonic() + 10
    while not route.ran and time.monotonic() < deadline:
        time.sleep(0.05)
    assert route.ran == [("pwd; echo to-err >&2; exit 7", 7)]


def test_a_directory_outside_the_workspace_runs_in_the_workspace(route: Route,
                                                                 tmp_path: Path) -> None:
    assert run(route.stub("pwd"), tmp_path).stdout.strip() == str(route.workspace)


def test_a_stub_works_once_and_leaves_nothing_behind(route: Route) -> None:
    stub = route.stub("touch ran-$RANDOM")
    [go] = {word for word in shlex.split(stub) if word.endswith(".go")}
    directory = Path(go).with_suffix("")
    assert directory.parent == route.calls and stat.S_ISFIFO(Path(go).stat().st_mode)
    assert run(stub, route.workspace).returncode == 0
    deadline = time.monotonic() + 10
    while directory.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not directory.exists() and not Path(go).exists()  # its FIFOs are gone
    again = run(stub, route.workspace)
    assert again.returncode == 126 and "already used" in again.stderr
    assert len(list(route.workspace.glob("ran-*"))) == 1
    assert not directory.exists()  # and running it again made nothing


def test_killing_the_stub_kills_its_jailed_command(route: Route) -> None:
    # The command holds `gate` open for reading until it dies: a writer that cannot open it
    # (ENXIO, no reader left) sees the command gone, with no wait on the clock.
    gate = route.workspace / "gate"
    os.mkfifo(gate)
    stub = route.stub("exec 3<>gate; touch started; read -r line <&3; touch late")
    process = subprocess.Popen(["/bin/bash", "-c", stub], cwd=route.workspace,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 30
    while not (route.workspace / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (route.workspace / "started").exists()
    os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))  # held: ENXIO here would say it is not
    os.killpg(process.pid, signal.SIGKILL)  # as a CLI stops a call: the stub's whole group
    process.wait()
    assert has_no_reader(gate), "the jailed command outlived its stub"
    assert not (route.workspace / "late").exists()


def has_no_reader(fifo: Path, within: float = 30.0) -> bool:
    """Whether every reader of `fifo` has closed it (died), waited for as an outcome."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError as error:
            if error.errno == errno.ENXIO:
                return True
            raise
        time.sleep(0.02)
    return False


def test_a_call_returned_while_its_command_runs_ends_the_command_with_its_jail(
        route: Route) -> None:
    """A CLI that returns a call before its command ended (Copilot past `initial_wait`): its
    jail is ended then, and the command's later write never happens; a call whose command has
    ended has nothing left to end."""
    stub = route.stub("touch started; sleep 30; touch late")
    process = subprocess.Popen(["/bin/bash", "-c", stub], cwd=route.workspace,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (route.workspace / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert route.jails.end(stub) is True
    assert process.wait(timeout=30) == 128 + signal.SIGTERM  # the stub is told it was killed
    deadline = time.monotonic() + 10
    while not route.ran and time.monotonic() < deadline:
        time.sleep(0.05)
    assert route.ran == [("touch started; sleep 30; touch late", -signal.SIGTERM)]
    assert not (route.workspace / "late").exists()  # its jail (its pid namespace) is gone
    assert route.jails.end(stub) is False
    finished = route.stub("true")
    assert run(finished, route.workspace).returncode == 0
    assert route.jails.end(finished) is False


def test_a_command_ended_and_reaped_before_its_wait_began_has_its_status(route: Route) -> None:
    """`end` can kill and reap a jail's process before the call's thread starts watching it (a CLI
    that returns the call at once, on a loaded machine): the stub is still told the status, not
    left without one (it exited 126, "no status")."""
    process = subprocess.Popen(["sleep", "30"], start_new_session=True)
    os.killpg(process.pid, signal.SIGTERM)
    process.wait()
    read, write = os.pipe()
    try:
        assert route.jails._wait(process, write) == -signal.SIGTERM
    finally:
        os.close(read)
        os.close(write)


def test_a_fifo_swapped_for_a_symlink_by_the_command_is_never_written_through(
        route: Route, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    # every name in its call directory, and the status FIFO's beside it (which it cannot see)
    swap = (f'for d in {route.calls}/*/; do for n in cmd out err; do ln -sf {victim} "$d/$n"; '
            f'done; ln -sf {victim} "${{d%/}}.rc"; done')
    done = run(route.stub(swap), route.workspace)
    assert done.returncode == 0, done.stderr  # and its real status reached the stub
    deadline = time.monotonic() + 10
    while not route.ran and time.monotonic() < deadline:  # the call is over on agentctl's side
        time.sleep(0.05)
    assert route.ran and victim.read_text() == "precious\n"


def test_calls_running_at_once_each_get_their_own_jail_and_output(route: Route) -> None:
    stubs = [route.stub(f"sleep 0.5; echo call-{n}; exit {n}") for n in range(3)]
    running = [subprocess.Popen(["/bin/bash", "-c", stub], cwd=route.workspace,
                                stdout=subprocess.PIPE, text=True) for stub in stubs]
    told = [(process.communicate(timeout=60)[0], process.returncode) for process in running]
    assert told == [(f"call-{n}\n", n) for n in range(3)]


def test_a_held_call_waits_for_its_command_and_one_past_the_limit_is_ended(
        route: Route) -> None:
    """A CLI that gave a call back while its command runs (Codex past `yield_time_ms`) is
    held until the command ends, its write done; one still running when the limit passes (the
    run's wall budget) is ended with its jail, and its later write never happens."""
    finishes = route.stub("sleep 0.3; touch finished")
    process = subprocess.Popen(["/bin/bash", "-c", finishes], cwd=route.workspace,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not route.jails.busy and time.monotonic() < deadline:
        time.sleep(0.01)
    assert route.jails.hold(finishes, 60) is True
    assert (route.workspace / "finished").exists()
    assert process.wait(timeout=30) == 0
    stays = route.stub("touch started; sleep 30; touch late")
    process = subprocess.Popen(["/bin/bash", "-c", stays], cwd=route.workspace,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not (route.workspace / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert route.jails.hold(stays, 0.2) is False
    assert process.wait(timeout=30) == 128 + signal.SIGTERM
    assert not (route.workspace / "late").exists()
    assert route.jails.hold(stays, 60) is True  # nothing left to wait for
