"""One request of the agent, as the gateway handles it: the placeholder key, the route and the
budget checked first; then forwarded, tried again on a vendor fault while nothing of the answer
went to the agent (`model_faults`), and passed on (server-sent events one event at a time,
metered as they pass; once a budget is spent the event that crossed it, an `error` event naming
the budget, and the end). Each upstream request, failed ones included, is an `Exchange`.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING

from agentctl.domain.model_faults import RETRIED_STATUSES, wait_before_retry
from agentctl.domain.model_routes import budget_refusal
from agentctl.execution.gateway.exchange import Exchange
from agentctl.execution.gateway.guard import GUARD_HEADER
from agentctl.execution.gateway.meter import Meter

if TYPE_CHECKING:
    from agentctl.execution.gateway.server import Gateway

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "te", "trailer", "transfer-encoding", "upgrade", "host",
                        "content-length", "accept-encoding", "x-api-key", "authorization",
                        "x-goog-api-key", GUARD_HEADER})  # keys and the guard's: agentctl's
KEEP_BYTES = 4 * 1024 * 1024  # of each request and response, for the record
UPSTREAM_ERRORS = (OSError, http.client.HTTPException)


class _Broke(Exception):
    """The upstream failed while the gateway read its answer (not the agent's side)."""


def handler_for(gateway: Gateway) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        pass

    Handler.gateway = gateway
    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # a kept-alive client would otherwise wait out a delayed ACK for each event after the
    # headers (Nagle's algorithm): 40 ms per request
    disable_nagle_algorithm = True
    gateway: Gateway

    def log_message(self, *_: object) -> None:
        pass

    # every method reaches the route check, so whatever it is, it is refused on record
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET  # noqa: N815

    def _handle(self) -> None:
        gateway = self.gateway
        gateway.begun()
        try:
            self._checked()
        finally:
            gateway.ended()

    def _checked(self) -> None:
        gateway = self.gateway
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        header = self._key_header()
        if header is None:
            self._error(401, "authentication_error",
                        "agentctl gateway: this request does not carry the attempt's key")
            return
        if gateway.on_request is not None:  # before the model can hear of it
            gateway.on_request(body)
        refusal = gateway.routes.refusal(self.command, self.path, self.headers.get("host"))
        if refusal is None and gateway.spent:
            refusal = budget_refusal(gateway.spent)
        if refusal is None:
            refusal = gateway.unguarded(self.headers.get(GUARD_HEADER))
        if refusal is not None:
            gateway.refuse(self.command, self.path, refusal)
            self._error(refusal.status, "invalid_request_error", refusal.reason)
            return
        headers = {name: value for name, value in self.headers.items()
                   if name.lower() not in HOP_BY_HOP}
        headers["Accept-Encoding"] = "identity"  # metered as it passes
        if gateway.key:
            headers[header] = f"Bearer {gateway.key}" if header == "Authorization" \
                else gateway.key
        self._forward(body, headers)

    def _key_header(self) -> str | None:
        """Which header carried the placeholder key (`x-api-key`, Gemini's `x-goog-api-key`
        or `Authorization`)."""
        placeholder = self.gateway.placeholder
        for name in ("x-api-key", "x-goog-api-key"):
            if self.headers.get(name) == placeholder:
                return name
        if self.headers.get("authorization") == f"Bearer {placeholder}":
            return "Authorization"
        return None

    # --- upstream, tried again on the vendor's faults ------------------------------------
    def _forward(self, body: bytes, headers: dict[str, str]) -> None:
        gateway, tries = self.gateway, 0
        while True:
            tries += 1
            started = time.perf_counter()
            connection: http.client.HTTPConnection | None = None
            try:
                connection, response = gateway.send(self.command, self.path, body, headers)
                streamed = response.status < 400 and response.getheader(
                    "content-type", "").startswith("text/event-stream")
                data = b"" if streamed else response.read()
            except UPSTREAM_ERRORS as error:
                if connection is not None:
                    gateway.drop(connection)
                if self._failed(body, started, tries, error):
                    continue
                return
            if streamed:
                self._stream(connection, response, body, started)
                return
            meter = Meter()
            meter.body(data)
            wait = wait_before_retry(gateway.retries, tries, response.status,
                                     response.getheader, time.time()) \
                if response.status in RETRIED_STATUSES and not gateway.closing else None
            fault = f"HTTP {response.status} {response.reason}".strip() \
                if response.status in RETRIED_STATUSES else None
            gateway.give_back(connection, response, reusable=True)
            gateway.settle(meter, self._exchange(response.status, body, meter, data, started,
                                                 fault=fault, retry_in=wait))
            if wait is not None and not gateway.closed_within(wait):
                continue
            self._whole(response, data)
            return

    def _failed(self, body: bytes, started: float, tries: int, error: BaseException) -> bool:
        """An upstream request that got no whole answer, on record: True to try again; else
        the agent is answered 502 (or 504 for a timeout, which is not tried again)."""
        gateway = self.gateway
        timed_out = isinstance(error, TimeoutError)
        if gateway.closing:
            fault = "given up on with no answer: the agent's turn ended"
        elif timed_out:
            fault = f"no answer within {gateway.retries.timeout_seconds:g} s"
        else:
            fault = f"the connection failed: {type(error).__name__}: {error}".rstrip(": ")
        wait = None if timed_out or gateway.closing else wait_before_retry(
            gateway.retries, tries, None, lambda _name: None, time.time())
        status = 504 if timed_out else 502
        gateway.settle(Meter(), self._exchange(status, body, Meter(), b"", started, fault=fault,
                                               retry_in=wait, abandoned=gateway.closing))
        if wait is not None and not gateway.closed_within(wait):
            return True
        self._error(status, "api_error", f"agentctl gateway: the model endpoint "
                                         f"{gateway.upstream.netloc}: {fault}")
        return False

    def _exchange(self, status: int, body: bytes, meter: Meter, kept: bytes, started: float, *,
                  digest: str | None = None, stop: str | None = None, fault: str | None = None,
                  retry_in: float | None = None, abandoned: bool = False) -> Exchange:
        gateway = self.gateway
        return Exchange(
            method=self.command, path=self.path, status=status, model=meter.model,
            input_tokens=meter.input_tokens, output_tokens=meter.output_tokens,
            cost_usd=gateway.price(meter),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            stop_reason="agentctl_budget" if stop else meter.stop_reason,
            request_digest=_digest(body), response_digest=digest or _digest(kept),
            request=body[:KEEP_BYTES], response=kept[:KEEP_BYTES], text="".join(meter.texts),
            budget_stop=stop, fault=fault, retry_in=retry_in,
            abandoned=abandoned and fault is not None)

    # --- to the agent ----------------------------------------------------------------------
    def _head(self, response: http.client.HTTPResponse) -> None:
        self.send_response(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)

    def _whole(self, response: http.client.HTTPResponse, data: bytes) -> None:
        self._head(response)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, connection: http.client.HTTPConnection,
                response: http.client.HTTPResponse, body: bytes, started: float) -> None:
        """Pass a streamed answer on, metered; on record once it ended (however it ended)."""
        gateway = self.gateway
        meter, kept, hasher = Meter(), bytearray(), hashlib.sha256()
        stop, fault, gone = None, None, False
        try:
            stop = self._events(response, meter, kept, hasher)
        except _Broke as broke:  # what it cost up to there still counts
            fault = str(broke)
            self.close_connection = True  # the agent sees the answer break off, as it did
        except OSError:  # the agent went away (or was stopped): what it cost still counts
            gone = True
        finally:
            gateway.give_back(connection, response, reusable=not gone and fault is None)
        gateway.settle(meter, self._exchange(response.status, body, meter, bytes(kept), started,
                                             digest=f"sha256:{hasher.hexdigest()}", stop=stop,
                                             fault=fault, abandoned=gateway.closing))
        if not gone and fault is None:
            with contextlib.suppress(OSError):  # queued first: an agent that has its
                self.wfile.write(b"0\r\n\r\n")  # answer finds the exchange on record
                self.wfile.flush()

    def _events(self, response: http.client.HTTPResponse, meter: Meter, kept: bytearray,
                hasher: hashlib._Hash) -> str | None:
        """Relay the events; the budget that ended the answer early, if one did."""
        gateway = self.gateway
        self._head(response)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        event = bytearray()
        while True:
            line = _line(response, gateway.retries.timeout_seconds)
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
                stop = gateway.over(meter)
                if stop is not None:
                    self._chunk(_budget_event(
                        f"{stop}: {gateway.tokens + meter.tokens} tokens, "
                        f"${gateway.cost_usd + gateway.price(meter):.4f} spent"))
                    return stop
            if not line:
                if response.length:  # the upstream closed before the length it announced
                    raise _Broke(f"the answer broke off {response.length} bytes short")
                return None  # the last chunk goes once the exchange is on record

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
        if self.command != "HEAD":
            self.wfile.write(data)


def _line(response: http.client.HTTPResponse, timeout: float) -> bytes:
    """The answer's next line; `_Broke` when the upstream failed mid-answer."""
    try:
        return response.readline()
    except TimeoutError:
        raise _Broke(f"no more of the answer within {timeout:g} s") from None
    except UPSTREAM_ERRORS as error:
        raise _Broke(f"the answer broke off: {type(error).__name__}: {error}") from None


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _budget_event(reason: str) -> bytes:
    message = f"agentctl gateway: the budget is spent ({reason})"
    data = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                  "message": message, "code": "budget"}})
    return f"event: error\ndata: {data}\n\n".encode()
