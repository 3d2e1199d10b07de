"""Native shell calls run apart from the agent CLI: each in a fresh jail of its own.

A PreToolUse hook that allows a shell command (Claude Code's `Bash`, Codex's `exec_command`)
answers with the command replaced by a stub (`bridge/jailed.py`) and a one-shot token. The stub,
run by the CLI inside its sandbox, hands the attempt its stdin/stdout/stderr; the attempt runs
the command it kept for the token in a jail like `shell.run`'s for script agents: the workspace
read-write, an empty home, none of the agent's home, settings, hook socket or keys, its own pid
namespace (the CLI's `/proc/<pid>/fd` does not exist there), the profile's network rules and
not the model endpoints. So no process a tool call starts can speak for the agent or write
its stream. Closing the stub's connection (the CLI killed the call) kills the jail.

Runs happen on threads of their own (a command may run for minutes while the attempt goes on
answering hooks); they write no record: the exit codes and the jails' connection attempts are
collected here and recorded by the attempt's thread (`drain`).
"""

from __future__ import annotations

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
        """An exec request from a stub: its token's command runs on a thread of its own."""
        token = message.get("token")
        command = self._commands.pop(token, None) if isinstance(token, str) else None
        if command is None or len(fds) != 3:
            close_all(fds)
            with connection, contextlib.suppress(OSError):
                send(connection, refused("no command waits for this token (it was used, "
                                         "or never issued by this attempt)"))
            return
        cwd = self._cwd(message.get("cwd"))
        thread = threading.Thread(target=self._run, args=(command, cwd, connection, fds),
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
        """The attempt is over: every command still running is killed."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)
        self._commands.clear()

    def _cwd(self, value: object) -> Path:
        """The stub's working directory when it is inside the workspace, else the workspace."""
        if isinstance(value, str) and value.startswith("/"):
            path = Path(os.path.normpath(value))
            if path.is_relative_to(self.workspace) and path.is_dir():
                return path
        return self.workspace

    def _run(self, command: str, cwd: Path, connection: socket.socket, fds: list[int]) -> None:
        jail = self.sandbox.jail(self.workspace)
        code: int | None = None
        try:
            with connection, jail.confined([SHELL, "-c", command], self.env, cwd) as (argv, env):
                try:
                    process = subprocess.Popen(
                        argv, cwd=self.workspace, env=env, stdin=fds[0], stdout=fds[1],
                        stderr=fds[2], start_new_session=True, close_fds=True)
                except OSError as error:
                    send(connection, refused(f"the tool jail did not start: {error}"))
                    return
                finally:
                    close_all(fds)
                code = self._wait(process, connection)
                with contextlib.suppress(OSError):
                    connection.sendall(b'{"exit":%d}\n' % (code if code is not None else -9))
        finally:
            self._ran.put(Ran(command, code, jail))

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
