"""The only way out of the sandbox's network namespace: an allowlisting HTTP(S) proxy.

A sandboxed process has no network but loopback. Each spawned process gets its own gate: a unix
socket (bound into its sandbox, bridged to `127.0.0.1:3128` there, with `HTTP(S)_PROXY` set)
that knows who is behind it and which `host[:port]` rules apply to them. A CONNECT tunnel or a
plain `http://` request is let through when a rule matches, refused with 403 otherwise; either
way the attempt is kept on the gate, for the caller to record as a `net.connect` tool call once
the process is over. The proxy never writes anything itself: it runs on its own thread, and the
ledger has one writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agentctl.domain.clock import utcnow
from agentctl.domain.sandbox import matching_rule
from agentctl.execution.socket_dirs import SocketDir

MAX_HEAD_BYTES = 64 * 1024
MAX_SOCKET_DIR_CHARS = 90
CONNECT_TIMEOUT_SECONDS = 30.0
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


@dataclass(frozen=True, slots=True)
class ConnectAttempt:
    """One connection a sandboxed process asked the proxy for."""

    host: str
    port: int
    allowed: bool
    rule: str | None  # the allow rule that matched; None when denied
    at: datetime
    reason: str | None = None  # why it was denied, or why the tunnel failed


class Gate:
    """One process's way to the proxy: its socket, its rules, the attempts made through it."""

    def __init__(self, proxy: EgressProxy, socket_path: Path, rules: tuple[str, ...]) -> None:
        self.proxy = proxy
        self.socket_path = socket_path
        self.rules = rules
        self._attempts: list[ConnectAttempt] = []
        self._lock = threading.Lock()
        self._server: asyncio.AbstractServer | None = None

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
        if self._server is not None:
            self.proxy.call(self._stop())
        self.socket_path.unlink(missing_ok=True)
        return self.attempts

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 1.0)

    async def _start(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket_path))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _handle(self, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                TimeoutError, OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()


class EgressProxy:
    """The proxy of one attempt: an event loop on a daemon thread, started on first use."""

    def __init__(self, directory: Path) -> None:
        # A unix socket path has room for 107 bytes: a deep TMPDIR gets a short private dir.
        self._own_directory = SocketDir() if len(str(directory)) > MAX_SOCKET_DIR_CHARS \
            else None
        self.directory = self._own_directory.path if self._own_directory else directory
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._numbers = itertools.count(1)
        self._start = threading.Lock()  # the attempt's checks may open gates from two threads

    def open_gate(self, rules: Sequence[str]) -> Gate:
        gate = Gate(self, self.directory / f"net-{next(self._numbers)}.sock", tuple(rules))
        gate.socket_path.unlink(missing_ok=True)
        self.call(gate._start())
        return gate

    def call(self, coroutine: Coroutine[object, object, None]) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self._running_loop()).result(timeout=10)

    def close(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            self._loop = self._thread = None
        if self._own_directory is not None:
            self._own_directory.remove()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._start:
            return self._loop or self._started()

    def _started(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="agentctl-egress", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        return loop


async def _handle(gate: Gate, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    if len(head) > MAX_HEAD_BYTES:
        return
    request_line, _, rest = head.partition(b"\r\n")
    method, target, version = _request_line(request_line)
    if method == "CONNECT":
        host, port = _split_host_port(target, 443)
        forwarded = b""
    else:
        host, port, path = _absolute_url(target)
        forwarded = f"{method} {path} {version}\r\n".encode() + _forward_headers(rest)
    attempt = await _decide(gate, host, port)
    if not attempt.allowed:
        gate.note(attempt)
        body = (f"agentctl sandbox: {host}:{port} is not allowed ({attempt.reason})\n").encode()
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                     b"Connection: close\r\nContent-Length: " + str(len(body)).encode()
                     + b"\r\n\r\n" + body)
        await writer.drain()
        return
    try:
        upstream_reader, upstream_writer = await asyncio.wait_for(
            asyncio.open_connection(host, port), CONNECT_TIMEOUT_SECONDS)
    except (OSError, TimeoutError) as error:
        gate.note(ConnectAttempt(host, port, True, attempt.rule, attempt.at,
                                 reason=f"connect failed: {error}"))
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n")
        await writer.drain()
        return
    gate.note(attempt)
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
    else:
        upstream_writer.write(forwarded)
    await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))


async def _decide(gate: Gate, host: str, port: int) -> ConnectAttempt:
    """A rule must match the name asked for; a name that resolves to this machine's loopback
    passes only when the rule itself names loopback (no way back in through a wildcard DNS)."""
    now = utcnow()
    rule = matching_rule(gate.rules, host, port)
    if rule is None:
        return ConnectAttempt(host, port, False, None, now,
                              reason="not in [sandbox.network] allow")
    if not _names_loopback(rule) and await _resolves_to_loopback(host, port):
        return ConnectAttempt(host, port, False, None, now,
                              reason=f"resolves to loopback; rule {rule!r} does not name it")
    return ConnectAttempt(host, port, True, rule, now)


def _names_loopback(rule: str) -> bool:
    host = rule.rpartition(":")[0] if ":" in rule else rule
    return host in _LOOPBACK_NAMES or _is_loopback(host)


async def _resolves_to_loopback(host: str, port: int) -> bool:
    if _is_loopback(host):
        return True
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port)
    except OSError:
        return False  # the connect will fail and say so
    return any(_is_loopback(str(info[4][0])) for info in infos)


def _is_loopback(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified or address.is_link_local


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            sink.close()


def _request_line(line: bytes) -> tuple[str, str, str]:
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        raise ValueError("not an HTTP request line")
    return parts[0].upper(), parts[1], parts[2]


def _split_host_port(target: str, default: int) -> tuple[str, int]:
    if target.startswith("["):  # [::1]:443
        host, _, port = target[1:].partition("]")
        return host, int(port.lstrip(":") or default)
    host, _, port = target.rpartition(":") if ":" in target else (target, "", "")
    return host.lower(), int(port) if port else default


def _absolute_url(target: str) -> tuple[str, int, str]:
    if not target.lower().startswith("http://"):
        raise ValueError("a plain proxy request needs an absolute http:// URL")
    rest = target[len("http://"):]
    authority, slash, path = rest.partition("/")
    host, port = _split_host_port(authority.rpartition("@")[2], 80)
    return host, port, slash + path if slash else "/"


def _forward_headers(headers: bytes) -> bytes:
    """The client's headers, minus the proxy's own; one request per upstream connection."""
    kept = [line for line in headers.split(b"\r\n") if line and not line.lower().startswith(
        (b"proxy-", b"connection:", b"keep-alive:"))]
    return b"\r\n".join([*kept, b"Connection: close", b"", b""])
