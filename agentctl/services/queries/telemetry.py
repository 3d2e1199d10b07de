"""One OpenTelemetry trace per run: planned from the stored records once the run has ended, sent
over OTLP/HTTP, and the outcome (spans sent, spans dropped) appended to the run's event log.

The run itself never waits on a collector: the trace is built after the verdict, from what the
database holds, with the records' own times. A collector that is down costs at most
`[telemetry] timeout_seconds` and one warning line; the run's outcome is untouched. A run with
no endpoint never plans nor sends one: this module says when a trace is due, and the planner
and the exporter (`trace_export`) are imported only then; the part of the storage port they
read and write (`TraceStore`) is named here, so a use case that may send a trace says so
without importing them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Protocol

from agentctl.config import Config
from agentctl.domain.enums import RunStatus
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.transitions import TERMINAL_RUN
from agentctl.domain.verdict import Verdict
from agentctl.services.unit_of_work import Events

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"


class TraceReads(Protocol):
    """The records a run's trace is planned from, read in one snapshot."""

    def snapshot(self) -> AbstractContextManager[None]: ...
    def run(self, text: str | None) -> Run: ...
    def attempts(self, run_id: str) -> list[Attempt]: ...
    def steps(self, run_id: str) -> list[Step]: ...
    def tool_calls(self, run_id: str) -> list[ToolCall]: ...
    def verdict(self, run_id: str) -> Verdict | None: ...


class EventWork(Protocol):
    @property
    def events(self) -> Events: ...


class TraceStore(Protocol):
    """The part of the storage port sending a trace uses (any `Storage` is one): the run's
    records to plan it from, and the event log its outcome goes on."""

    def reads(self) -> AbstractContextManager[TraceReads]: ...
    def unit_of_work(self) -> AbstractContextManager[EventWork]: ...


def configured_endpoint(config: Config, environ: Mapping[str, str] = os.environ) -> str | None:
    """Where traces go: OTEL_EXPORTER_OTLP_ENDPOINT, else `[telemetry] otlp_endpoint`."""
    return environ.get(ENDPOINT_ENV) or config.telemetry.otlp_endpoint or None


def has_ended(run: Run) -> bool:
    """Whether the run has a trace to send: it has ended (or awaits approval)."""
    return run.status in TERMINAL_RUN or run.status is RunStatus.NEEDS_APPROVAL
