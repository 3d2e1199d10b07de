"""A run's trace planned and sent (`telemetry` says when): the planner and the exporter, which
a run with no OTLP endpoint never imports; the OpenTelemetry extra itself is the exporter's to
import (`execution.otlp`)."""

from __future__ import annotations

import os
from collections.abc import Callable

from agentctl.config import Config
from agentctl.debug_log import logger
from agentctl.domain.clock import utcnow
from agentctl.domain.enums import EventType
from agentctl.domain.errors import BadInput
from agentctl.domain.events import NewEvent
from agentctl.domain.otlp_endpoint import endpoint_problem
from agentctl.domain.run import Run
from agentctl.domain.tracing import TracePlan, plan_trace
from agentctl.execution.otlp import ExportResult, export_trace, traces_url
from agentctl.services.queries.telemetry import (
    ENDPOINT_ENV,
    TraceReads,
    TraceStore,
    configured_endpoint,
    has_ended,
)


def send_after_run(storage: TraceStore, config: Config, run: Run, endpoint: str,
                   ) -> ExportResult | None:
    """The trace of a run that has ended, sent after it (`lifecycle.start`); its ExportResult,
    or None without the extra. A failure is one warning line: the run's outcome stands."""
    try:
        result = _export(storage, config, run.run_id, endpoint)
    except BadInput as error:  # the extra is not installed: say so, the run stands
        _warn("agentctl: WARNING: no trace for %s: %s", run.run_id, error)
        return None
    _record(storage, run, result)
    if result.error:
        _warn("agentctl: WARNING: trace of %s not sent: %s (%d spans dropped)", run.run_id,
              result.error, result.dropped)
    return result


def export_finished_run(storage: TraceStore, config: Config, run_text: str | None, *,
                        endpoint: str | None) -> ExportResult:
    """`run trace`: send an ended run's trace (again); the outcome goes on its record."""
    target = endpoint or configured_endpoint(config)
    if not target:
        raise BadInput(f"no OTLP endpoint: pass --endpoint URL, set {ENDPOINT_ENV} or "
                       "[telemetry] otlp_endpoint")
    problem = endpoint_problem(target)
    if problem:
        source = "--endpoint" if endpoint else ENDPOINT_ENV if os.environ.get(ENDPOINT_ENV) \
            else "[telemetry] otlp_endpoint"
        raise BadInput(f"{source} {target!r} is not an OTLP/HTTP endpoint: {problem}")
    with storage.reads() as reads:
        run = reads.run(run_text)
    if not has_ended(run):
        raise BadInput(f"run {run.run_id} is {run.status.value}; trace a run that has ended")
    result = _export(storage, config, run.run_id, target)
    _record(storage, run, result)
    return result


def _warn(message: str, *args: object) -> None:
    logger("agentctl.telemetry").warning(message, *args)


def plan_for(reads: TraceReads, run_id: str) -> TracePlan:
    with reads.snapshot():
        run = reads.run(run_id)
        return plan_trace(run, reads.attempts(run_id), reads.steps(run_id),
                          reads.tool_calls(run_id), reads.verdict(run_id))


def _export(storage: TraceStore, config: Config, run_id: str, endpoint: str,
            timeout: float | None = None,
            on_wire: Callable[[bool], None] | None = None) -> ExportResult:
    with storage.reads() as reads:
        plan = plan_for(reads, run_id)
    if on_wire is not None:
        on_wire(True)
    try:
        return export_trace(plan, endpoint, max_spans=config.telemetry.max_spans,
                            timeout=config.telemetry.timeout_seconds if timeout is None
                            else timeout)
    finally:
        if on_wire is not None:
            on_wire(False)


def export_and_record(storage: TraceStore, config: Config, run: Run, endpoint: str, *,
                      timeout: float,
                      on_wire: Callable[[bool], None] | None = None) -> ExportResult:
    """Send the ended run's trace within `timeout` and put the outcome on its record.
    `on_wire(True)` is told as the trace goes out to the collector, `on_wire(False)` once
    it is back: only that part waits on the collector (reading the run, and the exporter's
    import, take what the machine's load makes them take)."""
    result = _export(storage, config, run.run_id, endpoint, timeout, on_wire)
    _record(storage, run, result)
    return result


def record_unsent(storage: TraceStore, run: Run, endpoint: str, why: str) -> None:
    """Put on the run's record that its trace was not sent, and why (every span dropped)."""
    with storage.reads() as reads:
        plan = plan_for(reads, run.run_id)
    _record(storage, run, ExportResult(traces_url(endpoint), f"{plan.trace_id:032x}",
                                       len(plan.spans), 0, len(plan.spans), why))


def _record(storage: TraceStore, run: Run, result: ExportResult) -> None:
    with storage.unit_of_work() as uow:
        uow.events.append_many([NewEvent(
            type=EventType.TRACE_EXPORTED, created_at=utcnow(), task_id=run.task_id,
            run_id=run.run_id, payload={
                "traceId": result.trace_id, "endpoint": result.endpoint, "spans": result.spans,
                "exported": result.exported, "dropped": result.dropped,
                "error": result.error})])
