"""An OTLP/HTTP trace receiver on 127.0.0.1 for tests: the collector is a boundary agentctl does
not own, so the test stands in for it, decoding what arrives with `opentelemetry-proto` (the
protocol's own message definitions), protobuf or JSON as the sender chose.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int
    service: str
    start_ns: int
    end_ns: int


@dataclass
class Receiver:
    port: int = 0
    spans: list[ReceivedSpan] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    bodies: list[tuple[str, bytes]] = field(default_factory=list)  # (content type, body)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def named(self, prefix: str) -> list[ReceivedSpan]:
        return [s for s in self.spans if s.name.startswith(prefix)]


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _decode(body: bytes, content_type: str) -> list[ReceivedSpan]:
    request = ExportTraceServiceRequest()
    if "json" in content_type:
        json_format.Parse(body, request)
    else:
        request.ParseFromString(body)
    found = []
    for resource_spans in request.resource_spans:
        service = str(_attributes(resource_spans.resource.attributes).get("service.name", ""))
        for scope in resource_spans.scope_spans:
            for span in scope.spans:
                found.append(ReceivedSpan(
                    span.name, span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(),
                    _attributes(span.attributes),
                    [(e.name, _attributes(e.attributes)) for e in span.events],
                    span.status.code, service, span.start_time_unix_nano,
                    span.end_time_unix_nano))
    return found


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            body = self._body()
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            with lock:
                receiver.paths.append(self.path)
                receiver.bodies.append((self.headers.get("Content-Type", ""), body))
                if self.path.endswith("/v1/traces"):
                    receiver.spans += _decode(body, self.headers.get("Content-Type", ""))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))
            chunks = []  # Node's exporter streams its body in chunks
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket.setblocking(False)  # an aborted client never leaves accept blocking
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
