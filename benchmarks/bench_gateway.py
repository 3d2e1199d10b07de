"""The model gateway's cost beside a direct connection to the same model server, in the same
run (issue 26).

    .venv/bin/python benchmarks/bench_gateway.py [--rounds 200]

A local upstream answers `POST /v1/messages` with a streamed Anthropic answer (40 SSE events)
and a non-streamed JSON one. Each round makes the same request directly and through a
`Gateway` (its placeholder key swapped for the real one, every event metered), interleaved.
Printed: the median time to the first streamed byte and to the whole answer, each beside the
direct figure. Target: the gateway adds at most 5 ms to each median.

Also printed (issue 45): what the gateway's checks of each request cost (the vendor's endpoint
by method and exact path, the Host, the budget), timed over allowed and refused requests beside
the one suffix test it made before. Target: at most 0.1 ms a request.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time
import timeit
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agentctl.domain.agent import ModelApi
from agentctl.domain.model_routes import budget_refusal
from agentctl.execution.gateway.server import Gateway, Limits

KEY = "sk-bench-real-key"


def _sse(event: str, data: dict[str, object]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


EVENTS = [_sse("message_start", {"type": "message_start", "message": {
    "id": "msg_1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 100,
                                                           "output_tokens": 1}}})]
EVENTS += [_sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
    "type": "text_delta", "text": f"chunk {n} of a streamed answer "}}) for n in range(40)]
EVENTS += [_sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                  "usage": {"output_tokens": 240}}),
           _sse("message_stop", {"type": "message_stop"})]
WHOLE = json.dumps({"type": "message", "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": "hello"}],
                    "usage": {"input_tokens": 100, "output_tokens": 5}}).encode()


class Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as the vendors' front ends do

    def log_message(self, *_: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("content-length") or 0))
        assert self.headers.get("x-api-key") == KEY
        if "stream" in self.path:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for event in EVENTS:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(WHOLE)))
            self.end_headers()
            self.wfile.write(WHOLE)


def request(port: int, key: str, path: str) -> tuple[float, float]:
    """(ms to the first body byte, ms to the whole answer) of one request."""
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 1000,
                       "messages": [{"role": "user", "content": "hi " * 2000}]}).encode()
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", path, body=body, headers={
        "x-api-key": key, "content-type": "application/json"})
    response = connection.getresponse()
    response.read(1)
    first = time.perf_counter()
    response.read()
    done = time.perf_counter()
    connection.close()
    return (first - started) * 1000, (done - started) * 1000


def line(name: str, value: float, baseline: float) -> None:
    print(f"{name:<44} {value:7.2f} ms  direct {baseline:7.2f} ms  {value / baseline:5.2f}x  "
          f"+{value - baseline:5.2f} ms  target +5 ms")


TARGETS = [("POST", "/v1/messages?beta=true"), ("POST", "/v1/messages"),
           ("POST", "/v1/messages/count_tokens"), ("POST", "/v1/messages/batches"),
           ("POST", "/v1/messages;x"), ("GET", "/v1/models"),
           ("POST", "http://127.0.0.1:1/v1/messages"), ("HEAD", "/")]
BEFORE_PATHS = ("/messages", "/responses", "/chat/completions")  # the check it made before


def checks(gateway: Gateway, rounds: int) -> None:
    """Microseconds a request for the gateway's checks, beside the suffix test of before."""
    host = f"127.0.0.1:{gateway.port}"
    routes = gateway.routes

    def now() -> None:
        for method, target in TARGETS:
            refusal = routes.refusal(method, target, host)
            if refusal is None and gateway.spent:
                budget_refusal(gateway.spent)

    def before() -> None:
        for method, target in TARGETS:
            _ = method == "POST" and target.partition("?")[0].endswith(BEFORE_PATHS)

    number = max(rounds, 100) * 50
    each = len(TARGETS) * number / 1e6
    now_us = min(timeit.repeat(now, number=number, repeat=5)) / each
    before_us = min(timeit.repeat(before, number=number, repeat=5)) / each
    print(f"{'checks of one request (route, Host, budget)':<44} {now_us:7.2f} us  "
          f"before {before_us:7.2f} us  +{now_us - before_us:5.2f} us  target <= 100 us")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = int(server.server_address[1])
    gateway = Gateway(f"http://127.0.0.1:{port}", KEY, api=ModelApi.ANTHROPIC,
                      limits=Limits(max_tokens=10**12))
    runs: dict[str, list[tuple[float, float]]] = {"direct": [], "gateway": [],
                                                   "direct-json": [], "gateway-json": []}
    plans: list[tuple[str, Callable[[], tuple[float, float]]]] = [
        ("direct", lambda: request(port, KEY, "/v1/messages?stream")),
        ("gateway", lambda: request(gateway.port, gateway.placeholder, "/v1/messages?stream")),
        ("direct-json", lambda: request(port, KEY, "/v1/messages")),
        ("gateway-json", lambda: request(gateway.port, gateway.placeholder, "/v1/messages"))]
    for _ in range(10):  # warm up
        for _, plan in plans:
            plan()
    for _ in range(rounds):
        for name, plan in plans:
            runs[name].append(plan())
        gateway.drain()
    med = {name: (statistics.median(r[0] for r in values),
                  statistics.median(r[1] for r in values)) for name, values in runs.items()}
    print(f"{rounds} rounds, interleaved; medians")
    line("streamed (40 events): first byte", med["gateway"][0], med["direct"][0])
    line("streamed (40 events): whole answer", med["gateway"][1], med["direct"][1])
    line("not streamed: whole answer", med["gateway-json"][1], med["direct-json"][1])
    checks(gateway, rounds)
    gateway.close()
    server.shutdown()


if __name__ == "__main__":
    main()
