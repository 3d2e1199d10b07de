"""The attempt's end of the hook socket: a unix socket in the attempt's private directory,
served from the attempt's own thread (the one writer), one request per connection.

Every request must name this attempt; anything else (another attempt's hook, a malformed
message) is answered with a denial and records nothing. Who speaks is told by the credential
it carries: the hooks' and the MCP server's are distinct random keys the attempt issued
(`Credentials`), and the handler is told which one came (or none: a forged request).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from agentctl.execution.agents import AttemptIdentity
from agentctl.hooks import wire

READ_SECONDS = 10.0


class Source(StrEnum):
    """Who a request on the socket speaks as, by the credential it carries."""

    HOOK = "hook"  # the PreToolUse/PostToolUse hook the CLI starts (its settings hold the key)
    MCP = "mcp"  # agentctl's MCP server the attempt started (its argv holds the key)
    UNKNOWN = "unknown"  # no credential this attempt issued: forged


@dataclass(frozen=True, slots=True)
class Credentials:
    """One key per channel, fresh per attempt: a message is checked against the channel its
    key belongs to, so the hook's key cannot ask for agentctl's tools, nor the MCP server's
    speak for a native call."""

    hook: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    mcp: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    # what a guard that runs inside the CLI (a plugin) adds to each model request, proving to
    # the gateway that it was loaded; never a key to the socket
    guard: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def source(self, key: object) -> Source:
        if isinstance(key, str) and secrets.compare_digest(key, self.hook):
            return Source.HOOK
        if isinstance(key, str) and secrets.compare_digest(key, self.mcp):
            return Source.MCP
        return Source.UNKNOWN


Handler = Callable[[dict[str, object], Source], dict[str, object]]


class BridgeServer:
    def __init__(self, identity: AttemptIdentity, handler: Handler,
                 credentials: Credentials) -> None:
        self.identity = identity
        self.handler = handler
        self.credentials = credentials
        self.path = identity.private / wire.SOCKET_NAME
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.bind(str(self.path))
        os.chmod(self.path, 0o600)
        self._socket.listen(16)
        self._socket.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._socket, selectors.EVENT_READ)

    def serve(self, timeout: float) -> int:
        """Answer what is waiting (up to `timeout` seconds for the first); how many."""
        served = 0
        while self._selector.select(timeout if served == 0 else 0):
            try:
                connection, _ = self._socket.accept()
            except BlockingIOError:
                break
            with connection:
                self._answer(connection)
            served += 1
        return served

    def _answer(self, connection: socket.socket) -> None:
        connection.setblocking(True)
        connection.settimeout(READ_SECONDS)
        try:
            message = receive(connection)
        except (OSError, ValueError) as error:
            with contextlib.suppress(OSError):
                send(connection, refused(f"unreadable request: {error}"))
            return
        reply = self._checked(message)
        with contextlib.suppress(OSError):  # the hook gave up waiting: nothing to tell it
            send(connection, reply)

    def _checked(self, message: dict[str, object]) -> dict[str, object]:
        if message.get("attempt") != self.identity.attempt_id:
            return refused(f"attempt {message.get('attempt')!r} is not the attempt running "
                            "here")
        return self.handler(message, self.credentials.source(message.get("key")))

    def close(self) -> None:
        self._selector.close()
        self._socket.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def refused(reason: str) -> dict[str, object]:
    """Not a decision on a call: the request itself is refused (the hook exits 2)."""
    return {"decision": wire.DENY, "ok": False, "refused": True, "reason": reason}


def send(connection: socket.socket, message: dict[str, object]) -> None:
    connection.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")


def receive(connection: socket.socket) -> dict[str, object]:
    """One JSON object line; ValueError if the peer sent anything else."""
    return parse(wire.read_line(connection))


def parse(data: bytes) -> dict[str, object]:
    if not data.strip():
        raise ValueError("empty message")
    value = json.loads(data)
    if not isinstance(value, dict):
        raise ValueError("message is not a JSON object")
    return value
