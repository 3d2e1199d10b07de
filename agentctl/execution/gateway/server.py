"""The gateway's HTTP server: one per attempt, on 127.0.0.1 in agentctl's own process.

Each request must carry the attempt's placeholder key (so nothing else on the machine can spend
through it), be one of its vendor's endpoints (`Routes`) and, for a native agent, come after
its guard proved itself loaded (`guard`); only then is it forwarded to the
real endpoint, with the real key in the same header the client used. Anything else, and every
request once a budget is spent, is answered by the gateway itself and recorded as refused.
The request handling (retries, metering as it streams) is `handler`'s. Every request becomes
an `Exchange`, queued for the attempt's writer thread to record.
"""

from __future__ import annotations

import contextlib
import http.client
import queue
import secrets
import socket
import sys
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from agentctl.domain.agent import ModelApi
from agentctl.domain.model_faults import DEFAULT_RETRIES, Retries
from agentctl.domain.model_prices import Price, price_of
from agentctl.domain.model_routes import Refusal, Routes
from agentctl.execution.gateway.exchange import NO_LIMITS, Exchange, Limits
from agentctl.execution.gateway.guard import Guard
from agentctl.execution.gateway.handler import handler_for
from agentctl.execution.gateway.meter import Meter
from agentctl.execution.gateway.upstream import Outbound

__all__ = ["Exchange", "Gateway", "Limits"]
CLOSE_SECONDS = 2.0  # for the requests given up on at close to be on record


class Gateway:
    """The per-attempt gateway: `base_url` for the agent, `placeholder` as its key."""

    def __init__(self, upstream: str, key: str | None, *, api: ModelApi,
                 limits: Limits = NO_LIMITS, prices: dict[str, Price] | None = None,
                 retries: Retries = DEFAULT_RETRIES, guard: Guard | None = None) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"model endpoint {upstream!r}: expected an http(s) URL")
        self.upstream = parts
        self.outbound = Outbound.of(parts)  # directly, or through the environment's proxy
        self.key = key
        self.limits = limits
        self.retries = retries
        self.prices = prices or {}
        self.guard = guard  # a native agent's: nothing is forwarded before its guard loaded
        # called with each request's body (on the gateway's thread) before it goes on: a native
        # agent ends the commands of the calls whose results it gives the model
        self.on_request: Callable[[bytes], None] | None = None
        self.placeholder = f"agentctl-gateway-{secrets.token_hex(16)}"
        self.exchanges: queue.SimpleQueue[Exchange] = queue.SimpleQueue()
        self.tokens = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.requests = 0
        self.spent: str | None = None  # why the budget is spent, once it is
        self.halted: str | None = None  # why a replay stopped (a request off its recording)
        # the vendor fault the agent was last answered with, the gateway's tries used up; a
        # later answer clears it
        self.unreachable: str | None = None
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._quiet = threading.Condition(self._lock)  # no request under way
        self._under_way = 0
        self._idle: list[http.client.HTTPConnection] = []
        self._busy: set[http.client.HTTPConnection] = set()  # waiting on the upstream
        self._server = _Server(("127.0.0.1", 0), handler_for(self))
        self.routes = Routes(api, self.upstream.path.rstrip("/"), f"127.0.0.1:{self.port}")
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

    def closed_within(self, seconds: float) -> bool:
        """Wait `seconds` (before a retry) unless the gateway closes meanwhile: True if it did."""
        return self._closing.wait(seconds)

    def close(self) -> None:
        """Stop serving; a request still waiting on the upstream is given up on, and on record
        (within a moment) rather than left hanging past the attempt."""
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for connection in self._idle:
                connection.close()
            self._idle.clear()
            for connection in self._busy:
                if connection.sock is not None:
                    with contextlib.suppress(OSError):
                        connection.sock.shutdown(socket.SHUT_RDWR)
        self.settled(CLOSE_SECONDS)

    def unguarded(self, header: str | None) -> Refusal | None:
        """Why a request may not go on yet: the agent's guard has not proved itself loaded
        (`header`: the request's guard header). None when it has, or there is no guard."""
        return self.guard.refusal(header, self._closing) if self.guard is not None else None

    @property
    def closing(self) -> bool:
        return self._closing.is_set()

    # --- upstream connections, kept alive (a TLS handshake per request would cost more
    # than everything else the gateway does) ----------------------------------------------
    def send(self, method: str, path: str, body: bytes, headers: dict[str, str],
             ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        with self._lock:
            idle = self._idle.pop() if self._idle else None
        for connection in ([idle] if idle is not None else []) + [None]:
            fresh = connection is None
            if connection is None:
                connection = self.outbound.connection(self.retries.timeout_seconds)
            with self._lock:
                self._busy.add(connection)
            try:
                self.outbound.request(connection, method, path, body, headers)
                return connection, connection.getresponse()
            except TimeoutError:
                self.drop(connection)
                raise
            except (OSError, http.client.HTTPException):
                self.drop(connection)
                if fresh or self.closing:  # else a kept connection the server closed
                    raise  # meanwhile: try a new one
        raise AssertionError("unreachable")

    def drop(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            self._busy.discard(connection)
        connection.close()

    def give_back(self, connection: http.client.HTTPConnection,
                  response: http.client.HTTPResponse, *, reusable: bool) -> None:
        with self._lock:
            self._busy.discard(connection)
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
            if exchange.fault is None:
                self.unreachable = None
            elif exchange.gave_up:
                self.unreachable = exchange.fault
        self.exchanges.put(exchange)

    def refuse(self, method: str, path: str, refusal: Refusal) -> None:
        """A request answered by the gateway itself, never forwarded: on record as refused."""
        self.exchanges.put(Exchange.refused(method, path, refusal))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """One line, never a traceback: a request that failed is the agent's problem to see."""
        error = sys.exc_info()[1]
        sys.stderr.write(f"agentctl gateway: a request failed: {type(error).__name__}: "
                         f"{error}\n")
