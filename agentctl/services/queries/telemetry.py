"""One OpenTelemetry trace per run: planned from the stored records once the run has ended, sent
over OTLP/HTTP, and the outcome (spans sent, spans dropped) appended to the run's event log.

The run itself never waits on a collector: the trace is built after the verdict, from what the
database holds, with the records' own times. A collector that is down costs at most
`[telemetry] timeout_seconds` and one warning line; the run's outcome is untouched. A run with
no endpoint never plans nor sends one: this module says when a trace is due, and the planner
and the exporter (`trace_export`) are imported only then.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agentctl.config import Config
from agentctl.domain.enums import RunStatus
from agentctl.domain.run import Run
from agentctl.domain.transitions import TERMINAL_RUN

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"


def configured_endpoint(config: Config, environ: Mapping[str, str] = os.environ) -> str | None:
    """Where traces go: OTEL_EXPORTER_OTLP_ENDPOINT, else `[telemetry] otlp_endpoint`."""
    return environ.get(ENDPOINT_ENV) or config.telemetry.otlp_endpoint or None


def has_ended(run: Run) -> bool:
    """Whether the run has a trace to send: it has ended (or awaits approval)."""
    return run.status in TERMINAL_RUN or run.status is RunStatus.NEEDS_APPROVAL
