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
from agentctl.hooks import hook, wire

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
        if message.get("native") is True:  # the compiled hook: its answer made here
            framed = native_answer(message, self._checked)
            with contextlib.suppress(OSError):
                connection.sendall(framed)
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
    if value.get("native") is True:  # the CLI's input, unchecked by the hook: read strictly
        strict: dict[str, object] = json.loads(data, parse_constant=_not_json,
                                               object_pairs_hook=_unique)
        return strict
    return value


def native_answer(message: dict[str, object],
                  checked: Callable[[dict[str, object]], dict[str, object]]) -> bytes:
    """The compiled hook's request answered as hook.py would answer the CLI, framed as
    `CODE OUT ERR\\n` (decimal exit code and byte counts), then stdout's and stderr's bytes: the
    hook checks and copies them, and parses no JSON. Its input is checked here as hook.py
    checks it (the same denials); the request then goes the Python hook's way (`checked`)."""
    try:
        agent, named, payload = message.get("agent"), message.get("event"), message.get("input")
        if not isinstance(agent, str) or agent not in hook.AGENTS:
            raise hook.HookError(f"usage: agentctl hook {'|'.join(hook.AGENTS)} --socket PATH "
                                 "--attempt ID --key KEY")
        if named is not None and not (isinstance(named, str) and named.isidentifier()):
            raise hook.HookError(f"--event {named!r} is not an event name")
        if not isinstance(payload, dict):
            raise hook.HookError("hook input is not a JSON object; expected the agent's "
                                 "PreToolUse or PostToolUse object on stdin")
        event = hook.checked_event(agent, named, payload)
        reply = checked({"attempt": message.get("attempt"), "key": message.get("key"),
                         "agent": agent, "event": event, "input": payload})
        code, out, err = hook.answer(agent, event, reply)
    except hook.HookError as error:
        code, out, err = 2, b"", hook.denied_line(str(error))
    errors = err.encode()
    return b"%d %d %d\n" % (code, len(out), len(errors)) + out + errors


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """An object whose keys are all distinct (no input can shadow the hook's own fields)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a key appears twice in one object")
    return value
