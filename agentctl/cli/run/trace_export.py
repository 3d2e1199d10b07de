"""`agentctl run trace`: a finished run as one OpenTelemetry trace over OTLP/HTTP."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import RunArgument
from agentctl.cli.output import note
from agentctl.domain.errors import InfrastructureFailure
from agentctl.services.queries.trace_export import export_finished_run


def trace(
    ctx: typer.Context,
    run_id: RunArgument = None,
    endpoint: Annotated[str | None, typer.Option("--endpoint", metavar="URL", help="OTLP/HTTP "
                        "endpoint. (default: OTEL_EXPORTER_OTLP_ENDPOINT, then "
                        "[telemetry] otlp_endpoint)")] = None,
) -> None:
    """Export a finished run as one OpenTelemetry trace over OTLP/HTTP."""
    current = state(ctx)
    result = export_finished_run(current.store, current.config, run_id, endpoint=endpoint)
    if result.error:
        raise InfrastructureFailure(f"trace {result.trace_id} not sent: {result.error}")
    note(f"trace {result.trace_id}: {result.exported} spans sent to {result.endpoint}"
         + (f", {result.dropped} dropped" if result.dropped else ""))
