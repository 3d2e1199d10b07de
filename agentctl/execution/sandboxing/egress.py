"""The only way out of the sandbox's network namespace: an allowlisting HTTP(S) proxy.

A sandboxed process has no network but loopback. Each spawned process gets its own gate: a unix
socket (bound into its sandbox, bridged to `127.0.0.1:3128` there, with `HTTP(S)_PROXY` set)
that knows who is behind it and which `host[:port]` rules apply to them. A CONNECT tunnel or a
plain `http://` request is let through when a rule matches, refused with 403 otherwise; either
way the attempt is kept on the gate, for the caller to record as a `net.connect` tool call once
the process is over. The proxy never writes anything itself: it runs on its own thread, and the
ledger has one writer.

The gates and the proxy's thread are here; what runs on its event loop is in `egress_server`,
imported when the first gate opens: asyncio costs ~15 ms to import, and where networks are
shared the first gate opens on the thread that prepares them, not on the run's start-up.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentctl.domain.sandbox import ConnectAttempt
from agentctl.execution.sandboxing.socket_dirs import SocketDir

if TYPE_CHECKING:
    import asyncio

    from agentctl.execution.sandboxing.egress_server import ProxyLoop

MAX_SOCKET_DIR_CHARS = 90


class Gate:
    """One process's way to the proxy: its socket, its rules, the attempts made through it."""

    def __init__(self, proxy: EgressProxy, socket_path: Path, rules: tuple[str, ...]) -> None:
        self.proxy = proxy
        self.socket_path = socket_path
        self.rules = rules
        self._attempts: list[ConnectAttempt] = []
        self._lock = threading.Lock()
        self.server: asyncio.AbstractServer | None = None  # set on the proxy's loop

    @property
    def attempts(self) -> tuple[ConnectAttempt, ...]:
        with self._lock:
            return tuple(self._attempts)

    def note(self, attempt: ConnectAttempt) -> None:
        with self._lock:
            self._attempts.append(attempt)

    def take(self) -> tuple[ConnectAttempt, ...]:
        """The attempts seen since the last `take`, and forget them (a gate lent out again)."""
        with self._lock:
            taken, self._attempts = tuple(self._attempts), []
        return taken

    def close(self) -> tuple[ConnectAttempt, ...]:
        """Stop listening (the process behind it has ended); the attempts it saw."""
        if self.server is not None:
            self.proxy.stop(self.server)
        self.socket_path.unlink(missing_ok=True)
        return self.attempts


class EgressProxy:
    """The proxy of one attempt: an event loop on a daemon thread, started on first use."""

    def __init__(self, directory: Path) -> None:
        # A unix socket path has room for 107 bytes: a deep TMPDIR gets a short private dir.
        self._own_directory = SocketDir() if len(str(directory)) > MAX_SOCKET_DIR_CHARS \
            else None
        self.directory = self._own_directory.path if self._own_directory else directory
        self._running: ProxyLoop | None = None
        self._numbers = itertools.count(1)
        self._start = threading.Lock()  # the attempt's checks may open gates from two threads

    def open_gate(self, rules: Sequence[str]) -> Gate:
        gate = Gate(self, self.directory / f"net-{next(self._numbers)}.sock", tuple(rules))
        gate.socket_path.unlink(missing_ok=True)
        gate.server = self._started().serve(gate.socket_path, gate.rules, gate.note)
        return gate

    def stop(self, server: asyncio.AbstractServer) -> None:
        """Stop a gate's server (on the loop that serves it)."""
        self._started().stop(server)

    def _started(self) -> ProxyLoop:
        """The proxy's loop, started by the first gate (asyncio imported then)."""
        from agentctl.execution.sandboxing.egress_server import ProxyLoop

        with self._start:
            if self._running is None:
                self._running = ProxyLoop()
            return self._running

    def close(self) -> None:
        if self._running is not None:
            self._running.end()
            self._running = None
        if self._own_directory is not None:
            self._own_directory.remove()
