"""The egress proxy's asyncio half: the server behind each gate, on the proxy's own loop, and
the handling of one connection (a CONNECT tunnel or a plain `http://` request) against the
gate's rules. `egress` imports it when a process first connects to a gate; it knows gates only
by their listening socket, their rules and where their attempts are noted.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import threading
from collections.abc import Callable, Coroutine
from typing import TypeVar

from agentctl.domain.clock import utcnow
from agentctl.domain.sandbox import ConnectAttempt, matching_rule

MAX_HEAD_BYTES = 64 * 1024
CONNECT_TIMEOUT_SECONDS = 30.0
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")
T = TypeVar("T")
Note = Callable[[ConnectAttempt], None]


class ProxyLoop:
    """The proxy's event loop, running on a daemon thread of its own from its making: the
    gates' servers are opened and stopped on it, from the threads that prepare and end them."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="agentctl-egress",
                                        daemon=True)
        self._thread.start()

    def serve(self, listener: int, rules: tuple[str, ...],
              note: Note) -> asyncio.AbstractServer:
        """Serve the listening unix socket `listener` (a descriptor, now the loop's)."""
        return self._run(serve(listener, rules, note))

    def stop(self, server: asyncio.AbstractServer) -> None:
        self._run(stop(server))

    def end(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def _run(self, coroutine: Coroutine[object, object, T]) -> T:
        """Run `coroutine` on the loop and wait for it (a gate opened or closed)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=10)


async def serve(listener: int, rules: tuple[str, ...], note: Note) -> asyncio.AbstractServer:
    """A gate's server: each connection on `listener` judged by `rules`, its attempt noted."""
    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _handle(rules, note, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                TimeoutError, OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    return await asyncio.start_unix_server(
        connected, sock=socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=listener))


async def stop(server: asyncio.AbstractServer) -> None:
    server.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(server.wait_closed(), 1.0)


async def _handle(rules: tuple[str, ...], note: Note, reader: asyncio.StreamReader,
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
    attempt = await _decide(rules, host, port)
    if not attempt.allowed:
        note(attempt)
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
        note(ConnectAttempt(host, port, True, attempt.rule, attempt.at,
                                 reason=f"connect failed: {error}"))
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n")
        await writer.drain()
        return
    note(attempt)
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
    else:
        upstream_writer.write(forwarded)
    await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))


async def _decide(rules: tuple[str, ...], host: str, port: int) -> ConnectAttempt:
    """A rule must match the name asked for; a name that resolves to this machine's loopback
    passes only when the rule itself names loopback (no way back in through a wildcard DNS)."""
    now = utcnow()
    rule = matching_rule(rules, host, port)
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
