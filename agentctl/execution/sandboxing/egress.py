"""The only way out of the sandbox's network namespace: an allowlisting HTTP(S) proxy.

A sandboxed process has no network but loopback. Each spawned process gets its own gate: a unix
socket (bound into its sandbox, bridged to `127.0.0.1:3128` there, with `HTTP(S)_PROXY` set)
that knows who is behind it and which `host[:port]` rules apply to them. A CONNECT tunnel or a
plain `http://` request is let through when a rule matches, refused with 403 otherwise; either
way the attempt is kept on the gate, for the caller to record as a `net.connect` tool call once
the process is over. The proxy never writes anything itself: it runs on its own thread, and the
ledger has one writer.

The gates and the proxy's thread are here; what runs on its event loop is in `egress_server`,
imported when a process first connects: asyncio (with ssl, socket, logging and a thread pool)
costs 10-15 ms to import, and most checks open no connection. A gate listens from its making
(the sandbox binds its socket before the process starts), with the plain socket the interpreter
has built in; a thread of its own waits for the first connection, then hands the listening
socket to the proxy's loop, which accepts that connection and every later one.
"""

from __future__ import annotations

import _socket
import itertools
import os
import select
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentctl.domain.sandbox import ConnectAttempt
from agentctl.execution.sandboxing.socket_dirs import SocketDir

if TYPE_CHECKING:
    import asyncio

    from agentctl.execution.sandboxing.egress_server import ProxyLoop

MAX_SOCKET_DIR_CHARS = 90
LISTEN_BACKLOG = 100  # asyncio's own


class Gate:
    """One process's way to the proxy: its socket, its rules, the attempts made through it."""

    def __init__(self, proxy: EgressProxy, socket_path: Path, rules: tuple[str, ...]) -> None:
        self.proxy = proxy
        self.socket_path = socket_path
        self.rules = rules
        self._attempts: list[ConnectAttempt] = []
        self._lock = threading.Lock()
        self.server: asyncio.AbstractServer | None = None  # set once a process connects
        self._handover = threading.Lock()
        self._closed = False
        self._listener = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            self._listener.bind(str(socket_path))
            self._listener.listen(LISTEN_BACKLOG)
            self._wake_read, self._wake_write = os.pipe()
        except OSError:
            self._listener.close()
            raise
        self._waiting = threading.Thread(target=self._serve_when_called, daemon=True,
                                         name="agentctl-egress-gate")
        self._waiting.start()

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
        with self._handover:  # the waiting thread hands the socket over before this, or never
            if self._closed:
                return self.attempts
            self._closed = True
            server = self.server
        if server is not None:
            self.proxy.stop(server)  # the loop closes the socket it was handed
        else:
            os.write(self._wake_write, b"x")
            self._waiting.join()
            self._listener.close()
        for end in (self._wake_read, self._wake_write):
            os.close(end)
        self.socket_path.unlink(missing_ok=True)
        return self.attempts

    def _serve_when_called(self) -> None:
        """Wait for a connection (or `close`), then have the proxy serve the socket. Where its
        loop cannot, the socket is closed: the process's connections are refused at once."""
        waiting = select.poll()
        waiting.register(self._listener.fileno(), select.POLLIN)
        waiting.register(self._wake_read, select.POLLIN)
        waiting.poll()
        with self._handover:
            if self._closed:
                return
            listener = self._listener.detach()
            try:
                self.server = self.proxy.serve(listener, self.rules, self.note)
            except (OSError, RuntimeError, TimeoutError):
                os.close(listener)


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
        socket_path = self.directory / f"net-{next(self._numbers)}.sock"
        socket_path.unlink(missing_ok=True)
        return Gate(self, socket_path, tuple(rules))

    def serve(self, listener: int, rules: tuple[str, ...],
              note: Callable[[ConnectAttempt], None]) -> asyncio.AbstractServer:
        """Serve the listening socket `listener` (a descriptor, now the loop's) by `rules`."""
        return self._started().serve(listener, rules, note)

    def stop(self, server: asyncio.AbstractServer) -> None:
        """Stop a gate's server (on the loop that serves it)."""
        self._started().stop(server)

    def _started(self) -> ProxyLoop:
        """The proxy's loop, started by the first connection (asyncio imported then)."""
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
