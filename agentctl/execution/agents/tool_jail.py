"""Native shell calls run apart from the agent CLI: each in a fresh jail of its own.

A PreToolUse hook that allows a shell command (Claude Code's `Bash`, Codex's `exec_command`)
answers with the command replaced by a stub (`bridge/jailed.py`) and a one-shot token. The stub,
run by the CLI inside its sandbox, hands the attempt its stdin/stdout/stderr; the attempt runs
the command it kept for the token in a jail like `shell.run`'s for script agents: the workspace
read-write, an empty home, none of the agent's home, settings, hook socket or keys, its own pid
namespace (the CLI's `/proc/<pid>/fd` does not exist there), the profile's network rules and
not the model endpoints. So no process a tool call starts can speak for the agent or write
its stream. Closing the stub's connection (the CLI killed the call) kills the jail.

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
import os
import queue
import secrets
import select
import shlex
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentctl.execution.agents.bridge import close_all, refused, send

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
    """One attempt's native shell calls: tokens issued by its thread, runs on their own."""

    def __init__(self, sandbox: Sandbox, workspace: Path, env: Mapping[str, str],
                 socket_path: Path) -> None:
        self.sandbox = sandbox
        self.workspace = workspace
        self.env = dict(env)
        self.socket_path = socket_path
        self._commands: dict[str, str] = {}  # token -> command; the attempt's thread only
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
        token = secrets.token_hex(16)
        self._commands[token] = command
        stub = shlex.join([sys.executable, "-E", "-s", "-S", _stub_path(),
                           str(self.socket_path), token])
        return {**tool_input, "command": stub}

    def start(self, message: dict[str, object], connection: socket.socket,
              fds: list[int]) -> None:
        """An exec request from a stub: its token's command runs in a jail of its own."""
        token = message.get("token")
        command = self._commands.pop(token, None) if isinstance(token, str) else None
        if command is None or len(fds) != 3:
            close_all(fds)
            with connection, contextlib.suppress(OSError):
                send(connection, refused("no command waits for this token (it was used, "
                                         "or never issued by this attempt)"))
            return
        thread = threading.Thread(target=self._run, args=(command, self._cwd(message.get("cwd")),
                                                          connection, fds),
                                  name="agentctl-tool-jail", daemon=True)
        self._threads.append(thread)
        thread.start()

    def drain(self) -> list[Ran]:
        """The commands that ended since the last call (for the attempt's thread to record)."""
        out = []
        while True:
            try:
                out.append(self._ran.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        """The attempt is over: every command still running is killed, the spare jail too."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.close()
        self._commands.clear()

    def _cwd(self, value: object) -> Path:
        """The stub's working directory when it is inside the workspace, else the workspace."""
        if isinstance(value, str) and value.startswith("/"):
            path = Path(os.path.normpath(value))
            if path.is_relative_to(self.workspace) and path.is_dir():
                return path
        return self.workspace

    # --- jails --------------------------------------------------------------------------------
    def _prewarm(self) -> None:
        """Boot the next jail on a thread of its own, unless one is ready or on its way."""
        with self._lock:
            if self._spare is not None or self._booting or self._stop.is_set():
                return
            self._booting = True
        thread = threading.Thread(target=self._boot_spare, name="agentctl-tool-jail-boot",
                                  daemon=True)
        self._threads.append(thread)
        thread.start()

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

    def _run(self, command: str, cwd: Path, connection: socket.socket, fds: list[int]) -> None:
        booted: _Booted | None = None
        code: int | None = None
        try:
            with connection:
                try:
                    booted = self._take()
                    with booted.channel:
                        booted.channel.sendmsg(
                            [f"{cwd}\0{command}".encode()],
                            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
                except OSError as error:
                    send(connection, refused(f"the tool jail did not start: {error}"))
                    return
                finally:
                    close_all(fds)
                    self._prewarm()  # the next call's jail boots while this one runs
                code = self._wait(booted.process, connection)
                with contextlib.suppress(OSError):
                    connection.sendall(b'{"exit":%d}\n' % (code if code is not None else -9))
        finally:
            if booted is not None:
                booted.stack.close()
                self._ran.put(Ran(command, code, booted.jail))

    def _wait(self, process: subprocess.Popen[bytes], connection: socket.socket) -> int | None:
        """The command's exit status; it is killed when the stub goes away (the CLI stopped
        the call) or the attempt ends."""
        hangup = connection.fileno()
        with contextlib.closing(_pidfd(process)) as pidfd:
            while process.poll() is None:
                ready, _, _ = select.select([pidfd, hangup], [], [], WATCH_SECONDS)
                if hangup in ready or self._stop.is_set():
                    _kill(process)
                    return process.returncode
        return process.returncode


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


def _pidfd(process: subprocess.Popen[bytes]) -> _Descriptor:
    return _Descriptor(os.pidfd_open(process.pid))


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


def _stub_path() -> str:
    from agentctl.bridge import jailed

    return jailed.__file__
