"""The gateway's HTTP server: one per attempt, on 127.0.0.1 in agentctl's own process.

Each request must carry the attempt's placeholder key (so nothing else on the machine can spend
through it); it is forwarded to the real endpoint with the real key in the same header the
client used. Server-sent events are passed on one event at a time, metered as they pass; once a
budget is spent the gateway sends the event that crossed it, an `error` event naming the budget,
and ends the response. Every model request becomes an `Exchange`, queued for the attempt's
writer thread to record.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import queue
import secrets
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from agentctl.domain.model_prices import Price, price_of
from agentctl.execution.gateway.meter import Meter

MODEL_PATHS = ("/messages", "/responses", "/chat/completions")
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "te", "trailer", "transfer-encoding", "upgrade", "host",
                        "content-length", "accept-encoding", "x-api-key", "authorization"})
KEEP_BYTES = 4 * 1024 * 1024  # of each request and response, for the record
UPSTREAM_TIMEOUT = 600.0


@dataclass(frozen=True, slots=True)
class Limits:
    max_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class Exchange:
    """One model request as the gateway saw it."""

    method: str
    path: str
    status: int
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_ms: float
    stop_reason: str | None
    request_digest: str
    response_digest: str
    request: bytes
    response: bytes
    text: str  # the assistant's text in the response
    budget_stop: str | None  # the budget that ended this response (`max_tokens N`)


class Gateway:
    """The per-attempt gateway: `base_url` for the agent, `placeholder` as its key."""

    def __init__(self, upstream: str, key: str | None, *, limits: Limits = Limits(),
                 prices: dict[str, Price] | None = None) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"model endpoint {upstream!r}: expected an http(s) URL")
        self.upstream = parts
        self.key = key
        self.limits = limits
        self.prices = prices or {}
        self.placeholder = f"agentctl-gateway-{secrets.token_hex(16)}"
        self.exchanges: queue.SimpleQueue[Exchange] = queue.SimpleQueue()
        self.tokens = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.requests = 0
        self.spent: str | None = None  # why the budget is spent, once it is
        self.halted: str | None = None  # why a replay stopped (a request off its recording)
        self._lock = threading.Lock()
        self._quiet = threading.Condition(self._lock)  # no request under way
        self._under_way = 0
        self._idle: list[http.client.HTTPConnection] = []
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="agentctl-gateway", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The upstream's URL with the gateway's origin: the same paths reach it."""
        return f"http://127.0.0.1:{self.port}{self.upstream.path.rstrip('/')}"

    def drain(self) -> list[Exchange]:
        out = []
        while True:
            try:
                out.append(self.exchanges.get_nowait())
            except queue.Empty:
                return out

    def begun(self) -> None:
        with self._lock:
            self._under_way += 1

    def ended(self) -> None:
        with self._lock:
            self._under_way -= 1
            self._quiet.notify_all()

    def settled(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the requests under way to be on record (a client
        that had its whole answer may end before the gateway queued the exchange)."""
        with self._quiet:
            return self._quiet.wait_for(lambda: self._under_way == 0, timeout)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for connection in self._idle:
                connection.close()
            self._idle.clear()

    # --- upstream connections, kept alive (a TLS handshake per request would cost more
    # than everything else the gateway does) ----------------------------------------------
    def send(self, method: str, path: str, body: bytes, headers: dict[str, str],
             ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        with self._lock:
            idle = self._idle.pop() if self._idle else None
        for connection in ([idle] if idle is not None else []) + [None]:
            fresh = connection is None
            if connection is None:
                upstream = self.upstream
                factory = http.client.HTTPSConnection if upstream.scheme == "https" \
                    else http.client.HTTPConnection
                connection = factory(upstream.hostname or "", upstream.port,
                                     timeout=UPSTREAM_TIMEOUT)
            try:
                connection.request(method, path, body=body or None, headers=headers)
                return connection, connection.getresponse()
            except OSError:
                connection.close()
                if fresh:  # a kept connection the server closed meanwhile: try a new one
                    raise
        raise AssertionError("unreachable")

    def give_back(self, connection: http.client.HTTPConnection,
                  response: http.client.HTTPResponse, *, reusable: bool) -> None:
        if reusable and response.isclosed() and not response.will_close:
            with self._lock:
                if len(self._idle) < 8:
                    self._idle.append(connection)
                    return
        connection.close()

    # --- budgets ------------------------------------------------------------------------
    def over(self, meter: Meter | None = None) -> str | None:
        """The budget (`max_tokens N`) that the spend so far, with `meter`'s response, reaches."""
        tokens, cost = self.tokens, self.cost_usd
        if meter is not None:
            tokens += meter.tokens
            cost += self.price(meter)
        limits = self.limits
        if limits.max_tokens is not None and tokens >= limits.max_tokens:
            return f"max_tokens {limits.max_tokens}"
        if limits.max_cost_usd is not None and cost >= limits.max_cost_usd:
            return f"max_cost_usd {limits.max_cost_usd:g}"
        return None

    def price(self, meter: Meter) -> float:
        return price_of(meter.model, self.prices).cost(meter.input_tokens, meter.output_tokens)

    def settle(self, meter: Meter, exchange: Exchange) -> None:
        with self._lock:
            self.tokens += meter.tokens
            self.input_tokens += meter.input_tokens
            self.output_tokens += meter.output_tokens
            self.cost_usd += exchange.cost_usd
            self.requests += 1
            self.spent = self.spent or exchange.budget_stop or self.over()
        self.exchanges.put(exchange)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """One line, never a traceback: a request that failed is the agent's problem to see."""
        error = sys.exc_info()[1]
        sys.stderr.write(f"agentctl gateway: a request failed: {type(error).__name__}: "
                         f"{error}\n")


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _handler(gateway: Gateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # a kept-alive client would otherwise wait out a delayed ACK for each event after the
        # headers (Nagle's algorithm): 40 ms per request
        disable_nagle_algorithm = True

        def log_message(self, *_: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._forward()

        def do_HEAD(self) -> None:  # noqa: N802
            self._forward()

        def do_POST(self) -> None:  # noqa: N802
            self._forward()

        def _forward(self) -> None:
            gateway.begun()
            try:
                self._exchange()
            finally:
                gateway.ended()

        def _exchange(self) -> None:
            started = time.perf_counter()
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            header = self._key_header()
            if header is None:
                self._error(401, "authentication_error",
                            "agentctl gateway: this request does not carry the attempt's key")
                return
            model_call = self.command == "POST" and \
                self.path.partition("?")[0].endswith(MODEL_PATHS)
            if model_call and gateway.spent:
                self._error(400, "invalid_request_error",
                            f"agentctl gateway: the budget is spent ({gateway.spent})")
                return
            headers = {name: value for name, value in self.headers.items()
                       if name.lower() not in HOP_BY_HOP}
            headers["Accept-Encoding"] = "identity"  # metered as it passes
            if gateway.key:
                headers[header] = gateway.key if header == "x-api-key" else \
                    f"Bearer {gateway.key}"
            try:
                connection, response = gateway.send(self.command, self.path, body, headers)
            except OSError as error:
                self._error(502, "api_error", f"agentctl gateway: the model endpoint "
                                              f"{gateway.upstream.netloc} cannot be reached: "
                                              f"{error}")
                return
            meter, kept, hasher, stop, gone = Meter(), bytearray(), hashlib.sha256(), None, False
            try:
                stop = self._relay(response, meter, kept, hasher, model_call)
            except OSError:  # the agent went away (or was stopped): what it cost still counts
                gone = True
            finally:
                gateway.give_back(connection, response, reusable=not gone)
            if model_call:
                latency = (time.perf_counter() - started) * 1000
                gateway.settle(meter, Exchange(
                    method=self.command, path=self.path, status=response.status,
                    model=meter.model, input_tokens=meter.input_tokens,
                    output_tokens=meter.output_tokens, cost_usd=gateway.price(meter),
                    latency_ms=round(latency, 3),
                    stop_reason="agentctl_budget" if stop else meter.stop_reason,
                    request_digest=_digest(body),
                    response_digest=f"sha256:{hasher.hexdigest()}", request=body[:KEEP_BYTES],
                    response=bytes(kept[:KEEP_BYTES]), text="".join(meter.texts),
                    budget_stop=stop))
            if not gone and response.getheader("content-type", "").startswith(
                    "text/event-stream"):
                with contextlib.suppress(OSError):  # queued first: an agent that has its
                    self.wfile.write(b"0\r\n\r\n")  # answer finds the exchange on record
                    self.wfile.flush()

        def _key_header(self) -> str | None:
            """Which header carried the placeholder key (`x-api-key` or `Authorization`)."""
            if self.headers.get("x-api-key") == gateway.placeholder:
                return "x-api-key"
            if self.headers.get("authorization") == f"Bearer {gateway.placeholder}":
                return "Authorization"
            return None

        def _relay(self, response: http.client.HTTPResponse, meter: Meter, kept: bytearray,
                   hasher: hashlib._Hash, metered: bool) -> str | None:
            """Pass the response on; the budget that ended it early, if one did."""
            self.send_response(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            streamed = response.getheader("content-type", "").startswith("text/event-stream")
            if not streamed:
                data = response.read()
                kept += data[:KEEP_BYTES]
                hasher.update(data)
                if metered:
                    meter.body(data)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                return None
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            event = bytearray()
            stop: str | None = None
            while True:
                line = response.readline()
                if line:
                    event += line
                    if line.startswith(b"data:"):
                        meter.event(line[5:].strip())
                if line in (b"\n", b"\r\n", b"") and event:
                    self._chunk(bytes(event))
                    hasher.update(event)
                    if len(kept) < KEEP_BYTES:
                        kept += event
                    event.clear()
                    if metered:
                        stop = gateway.over(meter)
                    if stop is not None:
                        self._chunk(_budget_event(
                            f"{stop}: {gateway.tokens + meter.tokens} tokens, "
                            f"${gateway.cost_usd + gateway.price(meter):.4f} spent"))
                        break
                if not line:
                    break
            return stop  # the last chunk goes once the exchange is on record (`_end`)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _error(self, status: int, kind: str, message: str) -> None:
            data = json.dumps({"type": "error", "error": {"type": kind, "message": message,
                                                          "code": kind}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _budget_event(reason: str) -> bytes:
    message = f"agentctl gateway: the budget is spent ({reason})"
    data = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                  "message": message, "code": "budget"}})
    return f"event: error\ndata: {data}\n\n".encode()
