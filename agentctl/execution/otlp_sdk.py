"""The OpenTelemetry SDK's half of a trace's export, with the SDK (the `otel` extra) imported at
the top: `otlp.export_trace` loads this module only once a collector answers, since importing
the SDK costs a third of a second of CPU.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agentctl.domain.tracing import PlannedSpan


def send(trace: int, kept: tuple[PlannedSpan, ...], url: str, *, timeout: float,
         batch: int) -> tuple[int, str | None]:
    """The spans sent to `url` in batches of `batch`, until the collector refuses one: how
    many went out, and why the rest did not (None when all did)."""
    spans = _readable(trace, kept)
    exporter = OTLPSpanExporter(endpoint=url, timeout=timeout)
    exported, error = 0, None
    with _quiet():
        try:
            for start in range(0, len(spans), batch):
                chunk = spans[start:start + batch]
                if exporter.export(chunk) is not SpanExportResult.SUCCESS:
                    error = f"the collector at {url} did not take the spans"
                    break
                exported += len(chunk)
        finally:
            exporter.shutdown()  # type: ignore[no-untyped-call]
    return exported, error


@contextmanager
def _quiet() -> Iterator[None]:
    """The exporter logs each failed batch and retry; agentctl says it once, itself."""
    logger = logging.getLogger("opentelemetry")
    level, logger.level = logger.level, logging.CRITICAL + 1
    try:
        yield
    finally:
        logger.setLevel(level)


def _readable(trace: int, planned: tuple[PlannedSpan, ...]) -> list[ReadableSpan]:
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
