"""Sending a planned trace over OTLP/HTTP with the OpenTelemetry SDK's exporter.

Imported only when a trace is configured; the SDK itself (the `otel` extra) is in `otlp_sdk`,
loaded once a collector answers. The spans are finished spans with
explicit start and end times, built from the records after the run ended, so the export never
sits on a run's hot path. At most `max_spans` go out (the plan lists parents first, so a capped
trace keeps its shape), in batches; the first batch the collector refuses ends the export, and
everything not sent is counted as dropped.
"""

from __future__ import annotations

import os
import socket
import urllib.parse
from dataclasses import dataclass

from agentctl.domain.errors import BadInput
from agentctl.domain.tracing import TracePlan

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
        from agentctl.execution import otlp_sdk
    except ImportError as missing:
        if (missing.name or "").startswith("agentctl"):
            raise
        raise BadInput("traces need the OpenTelemetry SDK: pip install 'agentctl[otel]'") \
            from None
    exported, error = otlp_sdk.send(plan.trace_id, plan.spans[:max_spans], url,
                                    timeout=timeout, batch=BATCH)
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
