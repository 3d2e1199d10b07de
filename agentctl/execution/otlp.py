"""Sending a planned trace over OTLP/HTTP with the OpenTelemetry SDK's exporter.

Imported only when a trace is configured (the `otel` extra). The spans are finished spans with
explicit start and end times, built from the records after the run ended, so the export never
sits on a run's hot path. At most `max_spans` go out (the plan lists parents first, so a capped
trace keeps its shape), in batches; the first batch the collector refuses ends the export, and
everything not sent is counted as dropped.
"""

from __future__ import annotations

import logging
import os
import socket
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from agentctl.domain.errors import BadInput
from agentctl.domain.tracing import PlannedSpan, TracePlan

BATCH = 512
_PROXY_VARIABLES = frozenset({"http_proxy", "https_proxy", "all_proxy"})


@dataclass(frozen=True, slots=True)
class ExportResult:
    endpoint: str
    trace_id: str
    spans: int  # in the plan
    exported: int
    dropped: int
    error: str | None = None


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL for a base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT means it."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/v1/traces") else f"{base}/v1/traces"


def export_trace(plan: TracePlan, endpoint: str, *, max_spans: int,
                 timeout: float) -> ExportResult:
    url = traces_url(endpoint)
    unreachable = _unreachable(url, timeout)
    if unreachable is not None:
        return ExportResult(url, f"{plan.trace_id:032x}", len(plan.spans), 0, len(plan.spans),
                            unreachable)
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import SpanExportResult
    except ImportError:
        raise BadInput("traces need the OpenTelemetry SDK: pip install 'agentctl[otel]'") \
            from None
    kept = plan.spans[:max_spans]
    spans = _readable(plan.trace_id, kept)
    exporter = OTLPSpanExporter(endpoint=url, timeout=timeout)
    exported, error = 0, None
    with _quiet():
        try:
            for start in range(0, len(spans), BATCH):
                batch = spans[start:start + BATCH]
                if exporter.export(batch) is not SpanExportResult.SUCCESS:
                    error = f"the collector at {url} did not take the spans"
                    break
                exported += len(batch)
        finally:
            exporter.shutdown()  # type: ignore[no-untyped-call]
    return ExportResult(url, f"{plan.trace_id:032x}", len(plan.spans), exported,
                        len(plan.spans) - exported, error)


def _unreachable(url: str, timeout: float) -> str | None:
    """Why nothing can be sent to `url` at all (nobody listens there), or None. Asked before the
    SDK is imported: importing it costs a third of a second of CPU, which a collector that is
    down would make every worker pay for nothing. Not asked through a proxy (which the SDK's
    HTTP client uses and a plain connection would not)."""

    parts = urllib.parse.urlsplit(url)
    proxied = any(name.lower() in _PROXY_VARIABLES and value for name, value in os.environ.items())
    if parts.hostname is None or proxied:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None  # the SDK says what is wrong with the URL
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return None
    except OSError as error:
        return f"the collector at {url} cannot be reached: {error.strerror or error}"


@contextmanager
def _quiet() -> Iterator[None]:
    """The exporter logs each failed batch and retry; agentctl says it once, itself."""
    logger = logging.getLogger("opentelemetry")
    level, logger.level = logger.level, logging.CRITICAL + 1
    try:
        yield
    finally:
        logger.setLevel(level)


def _readable(trace: int, planned: tuple[PlannedSpan, ...]) -> list:  # type: ignore[type-arg]

    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    try:
        ours = version("agentctl")
    except PackageNotFoundError:
        ours = "0"
    resource = Resource.create({"service.name": "agentctl", "service.version": ours})
    scope = InstrumentationScope("agentctl", ours)
    sampled = TraceFlags(TraceFlags.SAMPLED)

    def context(span_id: int) -> SpanContext:
        return SpanContext(trace, span_id, is_remote=False, trace_flags=sampled)

    return [ReadableSpan(
        name=span.name, context=context(span.span_id),
        parent=context(span.parent_id) if span.parent_id is not None else None,
        resource=resource, attributes=dict(span.attributes),
        events=[Event(e.name, dict(e.attributes), timestamp=e.at_ns) for e in span.events],
        kind=SpanKind.INTERNAL, instrumentation_scope=scope,
        status=Status(StatusCode.ERROR, span.error) if span.error else Status(StatusCode.UNSET),
        start_time=span.start_ns, end_time=span.end_ns) for span in planned]
