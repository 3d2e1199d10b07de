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
of ms, so the next one is booted ahead, while the model thinks: a small runner (`RUNNER`) waits
in it on a socket pair only agentctl holds the other end of, for the command, its working
directory and its descriptors, and then becomes the shell that runs it.

Runs happen on threads of their own (a command may run for minutes while the attempt goes on
answering hooks); they write no record: the exit codes and the jails' connection attempts are
collected here and recorded by the attempt's thread (`drain`).
"""

from __future__ import annotations

import array
import contextlib
import errno
import os
import queue
import secrets
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from agentctl.execution.sandbox import Jail, Sandbox

SHELL = "/bin/bash"
WATCH_SECONDS = 0.5  # how often a running command looks at the attempt's stop flag
GRACE_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class Ran:
    """A command that ran in its jail: what it was, how it ended, the jail (connections)."""

    command: str
    exit_code: int | None
    jail: Jail


class _Booted:
    """A jail started ahead, its runner waiting for one command on `channel`."""

    def __init__(self, jail: Jail, stack: contextlib.ExitStack, process: subprocess.Popen[bytes],
                 channel: socket.socket) -> None:
        self.jail, self.stack, self.process, self.channel = jail, stack, process, channel

    def close(self) -> None:
        """Unused: its runner sees the channel close and exits; the jail is taken down."""
        with contextlib.suppress(OSError):
            self.channel.close()
        try:
            self.process.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _kill(self.process)
        self.stack.close()


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
        self._spare: _Booted | None = None
        self._booting = False
        self._prewarm()

    def replace(self, tool_input: Mapping[str, object]) -> dict[str, object] | None:
        """The call's input with its command replaced by the stub (None: no command string,
        so it cannot be routed and must be denied)."""
        command = tool_input.get("command")
        if not isinstance(command, str):
            return None
        call = _Call(self.calls / secrets.token_hex(16))
        for fifo in call.fifos:
            os.mkfifo(fifo, 0o600)
        self._start(self._serve, call, command)
        return {**tool_input, "command": call.stub()}

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
        for thread in self._threads:
            thread.join(timeout=10)
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.close()
        shutil.rmtree(self.calls, ignore_errors=True)

    def _start(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name="agentctl-tool-jail",
                                  daemon=True)
        self._threads.append(thread)
        thread.start()

    def _cwd(self, value: str) -> Path:
        """The stub's working directory when it is inside the workspace, else the workspace."""
        if value.startswith("/"):
            path = Path(os.path.normpath(value))
            if path.is_relative_to(self.workspace) and path.is_dir():
                return path
        return self.workspace

    # --- one call -----------------------------------------------------------------------------
    def _serve(self, call: _Call, command: str) -> None:
        """Wait for the stub, run its command in a jail writing into its FIFOs, tell it the
        status, then take the jail down. Its FIFOs go in the end, so a stub works once."""
        booted: _Booted | None = None
        code: int | None = None
        try:
            said = _said(call.go, self._stop)  # waits until the stub starts
            ends = [_writer(call.out, self._stop), _writer(call.err, self._stop)]
            try:
                out, err = ends
                if said is None or out is None or err is None:
                    return
                try:
                    booted = self._take()
                except OSError as error:  # no jail: the stub says why, and exits 126
                    os.write(err, f"agentctl: not run: the tool jail did not start: "
                             f"{error}\n".encode())
                else:
                    code = self._run(booted, command,
                                     self._cwd(said.decode("utf-8", "replace")), out, ends)
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
            for fifo in call.fifos:
                with contextlib.suppress(OSError):
                    os.unlink(fifo)
            if booted is not None:  # after the stub has its status: off the call's path
                booted.stack.close()
                self._ran.put(Ran(command, code, booted.jail))

    def _run(self, booted: _Booted, command: str, cwd: Path, out: int,
             ends: list[int | None]) -> int | None:
        """Hand the command, its directory and descriptors to the jail's runner; its status.
        Only the jail keeps stderr (`ends[1]` is closed here); stdout is kept open to notice
        the stub's reader going away."""
        try:
            with booted.channel, open(os.devnull, "rb") as nothing:
                booted.channel.sendmsg(
                    [f"{cwd}\0{command}".encode()],
                    [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                      array.array("i", [nothing.fileno(), out, ends[1] or -1]))])
        finally:
            if ends[1] is not None:
                os.close(ends[1])
                ends[1] = None
            self._prewarm()  # the next call's jail boots while this one runs
        return self._wait(booted.process, out)

    def _wait(self, process: subprocess.Popen[bytes], out: int) -> int | None:
        """The command's exit status; it is killed when the stub's reader of its stdout goes
        away (the CLI stopped the call) or the attempt ends."""
        with contextlib.closing(_Descriptor(os.pidfd_open(process.pid))) as pidfd:
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
            booted = self._boot()
        except OSError:
            pass  # the call that needs it boots one itself, and says why if that fails
        finally:
            with self._lock:
                self._booting = False
                if booted is not None and not self._stop.is_set():
                    self._spare, booted = booted, None
        if booted is not None:
            booted.close()

    def _take(self) -> _Booted:
        """The spare jail if it is ready and alive, else one booted now."""
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None and spare.process.poll() is None:
            return spare
        if spare is not None:
            spare.close()
        return self._boot()

    def _boot(self) -> _Booted:
        jail = self.sandbox.jail(self.workspace)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        stack = contextlib.ExitStack()
        try:
            with theirs:
                argv, env = stack.enter_context(jail.confined(
                    [sys.executable, "-I", "-S", "-c", RUNNER, str(theirs.fileno())],
                    self.env, self.workspace))
                process = subprocess.Popen(
                    argv, cwd=self.workspace, env=env, stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    pass_fds=(theirs.fileno(),), start_new_session=True)
        except BaseException:
            ours.close()
            stack.close()
            raise
        return _Booted(jail, stack, process, ours)


@dataclass(frozen=True, slots=True)
class _Call:
    """One call's FIFOs: `go` (the stub's cwd), `out`, `err`, `rc` (its exit status)."""

    base: Path

    @property
    def go(self) -> Path:
        return self.base.with_suffix(".go")

    @property
    def out(self) -> Path:
        return self.base.with_suffix(".out")

    @property
    def err(self) -> Path:
        return self.base.with_suffix(".err")

    @property
    def rc(self) -> Path:
        return self.base.with_suffix(".rc")

    @property
    def fifos(self) -> tuple[Path, ...]:
        return (self.go, self.out, self.err, self.rc)

    def stub(self) -> str:
        """What the CLI runs instead: shell builtins and `cat` (no interpreter to start)."""
        go, out, err, rc = (shlex.quote(str(path)) for path in self.fifos)
        return (f"if [ -p {go} ]; then printf %s \"$PWD\" > {go} && {{ cat {err} >&2 & "
                f"cat {out}; wait; IFS= read -r agentctl_rc < {rc}; exit \"${{agentctl_rc:-126}}\"; }}; "
                f"else echo 'agentctl: not run: this call was already used or is over' >&2; "
                f"exit 126; fi")


def _said(fifo: Path, stop: threading.Event) -> bytes | None:
    """What the stub wrote into `fifo` (its cwd), once it has and closed it; None if the
    attempt ends first. Opened without blocking: a FIFO no writer ever opened reports no
    hangup, so the wait is a poll that looks at `stop` too."""
    descriptor = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
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
            descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO:
                return None
            time.sleep(0.001)
            continue
        os.set_blocking(descriptor, True)
        return descriptor
    return None


# The jail's first command after the network bridge: wait on the inherited socket for one
# request (the working directory, NUL, the command; stdin, stdout and stderr as descriptors),
# then become `bash -c COMMAND` there. The channel closing first (the attempt ended) exits 0.
RUNNER = r"""
import os, sys, _socket as S
channel = S.socket(S.AF_UNIX, S.SOCK_STREAM, 0, int(sys.argv[1]))
data, ancillary, _, _ = channel.recvmsg(1 << 16, S.CMSG_SPACE(3 * 4))
fds = []
for level, kind, payload in ancillary:
    if level == S.SOL_SOCKET and kind == S.SCM_RIGHTS:
        fds += [int.from_bytes(payload[i:i + 4], sys.byteorder) for i in range(0, len(payload) - 3, 4)]
while data:
    more = channel.recv(1 << 16)
    if not more:
        break
    data += more
channel.close()
if len(fds) != 3 or b"\0" not in data:
    os._exit(0 if not data else 126)
for target, fd in enumerate(fds):
    os.dup2(fd, target)
for fd in fds:
    if fd > 2:
        os.close(fd)
cwd, command = data.decode("utf-8", "surrogateescape").split("\0", 1)
os.chdir(cwd)
os.execv("/bin/bash", ["/bin/bash", "-c", command])
"""


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
