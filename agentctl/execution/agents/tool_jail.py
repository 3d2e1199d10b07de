"""Native shell calls run apart from the agent CLI: each in a fresh jail of its own.

A PreToolUse hook that allows a shell command (Claude Code's `Bash`, Codex's `exec_command`)
answers with the command replaced by a stub: a few shell words naming one-shot FIFOs in the
agent's private home (their names are the token). Run by the CLI inside its sandbox, the stub
writes its working directory into the first, then reads the command's stdout and stderr from
two more and its exit status from the last. The attempt runs the command it kept for the token
in a jail like `shell.run`'s for script agents, writing straight into those FIFOs: the
workspace read-write, an empty home, none of the agent's home, settings, hook socket or keys,
its own pid namespace (the CLI's `/proc/<pid>/fd` does not exist there), the profile's network
rules and not the model endpoints. So no process a tool call starts can speak for the agent or
write its stream. The stub's readers going away (the CLI killed the call) kills the jail. The
stub is shell builtins and `cat`: no interpreter starts on the call's path.

Each jail serves one command and ends with it: nothing one call leaves running can touch the
next call's output or exit code. Starting a jail (bubblewrap, the network bridge) costs tens
of ms, so once the agent runs shell commands the next jail is booted while one runs: it sees
its call's directory of FIFOs (and no other), and a shell (`RUNNER`) waits in it on the `cmd`
FIFO for the working directory and the command, then becomes `bash -c COMMAND` writing into
`out` and `err`. The first call of an attempt boots its own.

Runs happen on threads of their own (a command may run for minutes while the attempt goes on
answering hooks); they write no record: the exit codes and the jails' connection attempts are
collected here and recorded by the attempt's thread (`drain`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import secrets
import select
import shlex
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentctl.execution.sandboxing.sandbox import Jail, Sandbox

WATCH_SECONDS = 0.5  # how often a running command looks at the attempt's stop flag
GRACE_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class Ran:
    """A command that ran in its jail: what it was, how it ended, the jail (connections)."""

    command: str
    exit_code: int | None
    jail: Jail


class _Booted:
    """A jail started for one call directory, its runner waiting on the `cmd` FIFO there."""

    def __init__(self, jail: Jail, stack: contextlib.ExitStack,
                 process: subprocess.Popen[bytes], directory: Path) -> None:
        self.jail, self.stack, self.process, self.directory = jail, stack, process, directory

    def close(self) -> None:
        """The jail is taken down; unused, its runner first reads an empty `cmd` and exits."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                os.close(_open_fifo(self.directory / "cmd", os.O_WRONLY))
        try:
            self.process.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _kill(self.process)
        self.stack.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class ToolJails:
    """One attempt's native shell calls: stubs issued by its thread, runs on their own."""

    def __init__(self, sandbox: Sandbox, workspace: Path, env: Mapping[str, str],
                 calls: Path) -> None:
        self.sandbox = sandbox
        self.workspace = workspace
        self.env = dict(env)
        self.calls = calls  # where the FIFOs are made: seen at the same path inside the CLI's
        self.calls.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._ran: queue.SimpleQueue[Ran] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._ended = threading.Condition(self._lock)  # a command left `_running`
        # the jail running each call's command, by the call's stub, while it runs
        self._running: dict[str, subprocess.Popen[bytes]] = {}
        self._spare: _Booted | None = None
        self._booting = False

    def replace(self, tool_input: Mapping[str, object]) -> dict[str, object] | None:
        """The call's input with its command replaced by the stub (None: no command string,
        so it cannot be routed and must be denied). The stub names the spare jail's
        directory; with none ready, a fresh one whose jail boots when the stub starts."""
        command = tool_input.get("command")
        if not isinstance(command, str):
            return None
        with self._lock:
            booted, self._spare = self._spare, None
        if booted is not None and booted.process.poll() is not None:
            booted.close()
            booted = None
        call = _Call(booted.directory if booted is not None else self._directory())
        for fifo in call.fifos:
            os.mkfifo(fifo, 0o600)
        self._start(self._serve, call, command, booted)
        return {**tool_input, "command": call.stub()}

    @property
    def busy(self) -> bool:
        """Whether a command runs in a jail now."""
        with self._lock:
            return bool(self._running)

    def running(self, stub: str) -> bool:
        """Whether the command of `stub` runs now."""
        with self._lock:
            return stub in self._running

    def end(self, stub: str) -> bool:
        """The call whose stub is `stub` has returned: a command of it still running is killed
        with its jail (True), so nothing it started goes on after its call is on record."""
        with self._lock:
            process = self._running.pop(stub, None)
            self._ended.notify_all()
        if process is None:
            return False
        _kill(process)
        return True

    def hold(self, stub: str, seconds: float) -> bool:
        """Wait for the command of `stub` to end (True), up to `seconds` (the run's wall budget
        left, past which the attempt ends its jails anyway): then it is killed with its jail
        (False). A CLI that gives a call back while its command runs is held here, so the
        command's writes land while its call is the one under way."""
        with self._ended:
            if self._ended.wait_for(lambda: stub not in self._running or self._stop.is_set(),
                                    timeout=max(seconds, 0.0)):
                return True
        return not self.end(stub)

    def drain(self) -> list[Ran]:
        """The commands that ended since the last call (for the attempt's thread to record)."""
        out = []
        while True:
            try:
                out.append(self._ran.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        """The attempt is over: every command still running is killed, stubs never started
        are let go, the spare jail is taken down."""
        self._stop.set()
        with self._lock:
            self._ended.notify_all()  # a hold ends with the attempt
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=10)
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.close()
        shutil.rmtree(self.calls, ignore_errors=True)

    def _start(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name="agentctl-tool-jail",
                                  daemon=True)
        with self._lock:  # the finished ones go: an attempt may make thousands of calls
            self._threads = [*(t for t in self._threads if t.is_alive()), thread]
        thread.start()

    def _cwd(self, value: str) -> Path:
        """The stub's working directory when it is inside the workspace, else the workspace."""
        if value.startswith("/"):
            path = Path(os.path.normpath(value))
            if path.is_relative_to(self.workspace) and path.is_dir():
                return path
        return self.workspace

    # --- one call -----------------------------------------------------------------------------
    def _serve(self, call: _Call, command: str, booted: _Booted | None) -> None:
        """Wait for the stub, have the jail run its command writing into its FIFOs, tell the
        stub the status, then take the jail down. Its FIFOs go, so a stub works once."""
        code: int | None = None
        try:
            said = _said(call.go, self._stop)  # waits until the stub starts
            # agentctl's own write ends: the stub's readers never wait for a jail that failed,
            # and their going away (the call stopped) shows on `out`
            ends = [_writer(call.out, self._stop), _writer(call.err, self._stop)]
            try:
                out, err = ends
                if said is None or out is None or err is None:
                    return
                try:
                    if booted is None:
                        booted = self._boot(call.directory)
                    request = _writer(call.cmd, self._stop)
                    if request is None:
                        raise OSError("its runner is not waiting")
                    with self._lock:
                        self._running[call.stub()] = booted.process
                    with contextlib.closing(_Descriptor(request)):
                        cwd = self._cwd(said.decode("utf-8", "replace"))
                        os.write(request, f"{cwd}\0{command}\0".encode())
                    self._prewarm()  # the next call's jail boots while this one runs
                except OSError as error:  # no jail: the stub says why, and exits 126
                    os.write(err, f"agentctl: not run: the tool jail did not start: "
                             f"{error}\n".encode())
                else:
                    code = self._wait(booted.process, out)
                finally:
                    with self._lock:
                        self._running.pop(call.stub(), None)
                        self._ended.notify_all()
            finally:
                for end in ends:  # the stub's readers see the end of the output
                    if end is not None:
                        os.close(end)
            status = _writer(call.rc, self._stop)
            if status is not None:
                with contextlib.closing(_Descriptor(status)):
                    os.write(status, b"%d\n" % (128 - code if code is not None and code < 0
                                                 else code if code is not None else 126))
        except OSError:
            pass  # the stub went away: nothing to tell it
        finally:
            for fifo in (call.go, call.rc):
                with contextlib.suppress(OSError):
                    os.unlink(fifo)
            if booted is not None:  # after the stub has its status: off the call's path
                booted.close()
                self._ran.put(Ran(command, code, booted.jail))
            else:
                shutil.rmtree(call.directory, ignore_errors=True)

    def _wait(self, process: subprocess.Popen[bytes], out: int) -> int | None:
        """The command's exit status; it is killed when the stub's reader of its stdout goes
        away (the CLI stopped the call) or the attempt ends. `end` may have killed and reaped
        it already (a CLI that returned the call at once): then its pid is gone, or another's."""
        try:
            watched = os.pidfd_open(process.pid)
        except ProcessLookupError:
            return process.wait()
        with contextlib.closing(_Descriptor(watched)) as pidfd:
            watch = select.poll()
            watch.register(pidfd, select.POLLIN)
            watch.register(out, select.POLLERR)  # a pipe's write end: no reader left
            while process.poll() is None:
                events = dict(watch.poll(WATCH_SECONDS * 1000))
                if events.get(out, 0) & select.POLLERR or self._stop.is_set():
                    _kill(process)
                    return process.returncode
        return process.returncode

    # --- jails --------------------------------------------------------------------------------
    def _directory(self) -> Path:
        """A fresh call directory, its runner's `cmd` FIFO made."""
        directory = self.calls / secrets.token_hex(16)
        directory.mkdir(mode=0o700)
        os.mkfifo(directory / "cmd", 0o600)
        return directory

    def _prewarm(self) -> None:
        """Boot the next jail on a thread of its own, unless one is ready or on its way."""
        with self._lock:
            if self._spare is not None or self._booting or self._stop.is_set():
                return
            self._booting = True
        self._start(self._boot_spare)

    def _boot_spare(self) -> None:
        booted = None
        try:
            booted = self._boot(self._directory())
        except OSError:
            pass  # the call that needs a jail boots one itself, and says why if that fails
        finally:
            with self._lock:
                self._booting = False
                if booted is not None and not self._stop.is_set():
                    self._spare, booted = booted, None
        if booted is not None:
            booted.close()

    def _boot(self, directory: Path) -> _Booted:
        jail = self.sandbox.jail(self.workspace, writable=(directory,))
        stack = contextlib.ExitStack()
        try:
            argv, env = stack.enter_context(jail.confined(
                ["/bin/bash", "-c", RUNNER, "agentctl-runner", str(directory)], self.env,
                self.workspace))
            process = jail.launch(argv, lambda args: subprocess.Popen(
                args, cwd=self.workspace, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        except BaseException:
            stack.close()
            raise
        return _Booted(jail, stack, process, directory)


@dataclass(frozen=True, slots=True)
class _Call:
    """One call's FIFOs. In its directory, which its jail sees: `cmd` (made with the
    directory), `out` and `err`, all three removed by the runner once it has them open (a
    tool that opens every file it finds would block on a FIFO). Beside it, which no jail sees:
    `go` (the stub's cwd) and `rc` (the command's exit status)."""

    directory: Path

    @property
    def cmd(self) -> Path:
        return self.directory / "cmd"

    @property
    def go(self) -> Path:
        return self.directory.with_suffix(".go")

    @property
    def out(self) -> Path:
        return self.directory / "out"

    @property
    def err(self) -> Path:
        return self.directory / "err"

    @property
    def rc(self) -> Path:
        return self.directory.with_suffix(".rc")

    @property
    def fifos(self) -> tuple[Path, ...]:
        return (self.go, self.out, self.err, self.rc)

    def stub(self) -> str:
        """What the CLI runs instead: shell builtins and `cat` (no interpreter to start). It
        ends with the command's status as a subshell's, not `exit`: a CLI that wraps the command
        in a shell of its own (Claude Code records the cwd after it) goes on as after any."""
        go, out, err, rc = (shlex.quote(str(path)) for path in self.fifos)
        return (f"if [ -p {go} ]; then printf %s \"$PWD\" > {go} && {{ cat {err} >&2 & "
                f"cat {out}; wait; IFS= read -r agentctl_rc < {rc}; "
                f"(exit \"${{agentctl_rc:-126}}\"); }}; "
                f"else echo 'agentctl: not run: this call was already used or is over' >&2; "
                f"(exit 126); fi")


def _said(fifo: Path, stop: threading.Event) -> bytes | None:
    """What the stub wrote into `fifo` (its cwd), once it has and closed it; None if the
    attempt ends first. Opened without blocking: a FIFO no writer ever opened reports no
    hangup, so the wait is a poll that looks at `stop` too."""
    descriptor = _open_fifo(fifo, os.O_RDONLY)
    with contextlib.closing(_Descriptor(descriptor)):
        watch = select.poll()
        watch.register(descriptor, select.POLLIN)
        data = b""
        while not stop.is_set():
            if not watch.poll(WATCH_SECONDS * 1000):
                continue
            try:
                chunk = os.read(descriptor, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                return data
            data += chunk
    return None


def _writer(fifo: Path, stop: threading.Event, seconds: float = 30.0) -> int | None:
    """The FIFO's write end (blocking) once its reader (the stub) has opened it; None if it
    does not within `seconds` (the stub died) or the attempt ends. Never a blocking open: a
    non-blocking one fails with ENXIO until there is a reader, and this very descriptor is
    kept (closing a probe would hand the reader an end of file)."""
    deadline = time.monotonic() + seconds
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            descriptor = _open_fifo(fifo, os.O_WRONLY)
        except OSError as error:
            if error.errno != errno.ENXIO:
                return None
            time.sleep(0.001)
            continue
        os.set_blocking(descriptor, True)
        return descriptor
    return None


# The jail's first command after the network bridge (`$1`: its call directory): the working
# directory and the command from the `cmd` FIFO (each ended by NUL), then `bash -c COMMAND`
# there writing into the stub's FIFOs. An empty `cmd` (the attempt ended first) exits 0.
RUNNER = ('exec 3< "$1/cmd" && IFS= read -r -d "" cwd <&3 && IFS= read -r -d "" command <&3; '
          'exec 3<&-; [ -n "$command" ] || exit 0; '
          'exec 4> "$1/out" 5> "$1/err" && rm -f -- "$1/cmd" "$1/out" "$1/err" && '
          'cd -- "$cwd" && exec /bin/bash -c "$command" < /dev/null >&4 2>&5 4>&- 5>&-')


def _open_fifo(fifo: Path, mode: int) -> int:
    """`fifo` opened without blocking, only if it is still a FIFO: a call's directory is
    writable from inside its jail, which could leave a symlink to a host file in its place."""
    descriptor = os.open(fifo, mode | os.O_NONBLOCK | os.O_NOFOLLOW)
    if not stat.S_ISFIFO(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OSError(errno.EINVAL, f"{fifo.name} is no longer a FIFO")
    return descriptor


class _Descriptor(int):
    def close(self) -> None:
        os.close(self)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """The jail's bwrap and all below it (its pid namespace dies with it)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
