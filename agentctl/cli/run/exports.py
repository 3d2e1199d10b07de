"""`agentctl run report|attest|open|trace`: a finished run for other tools and people."""


from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag, RunArgument
from agentctl.cli.output import note
from agentctl.domain.errors import BadInput, InfrastructureFailure
from agentctl.store.blobs import BlobStore


def report(
    ctx: typer.Context,
    run_id: RunArgument = None,
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help="swebench (SWE-bench's "
                   "report.json), junit (JUnit XML of every check), html (the run page), ctrf "
                   "(Common Test Report Format) or atif (agent trajectory).")] = "swebench",
    output: Annotated[Path | None, typer.Option("--output", metavar="FILE", help="Write it "
                      "here instead of stdout.")] = None,
    public: Annotated[bool, Flag("--public", help="html, ctrf, atif: keep only "
                      "SAFE_FOR_PUBLIC_LOG content.")] = False,
) -> None:
    """A run for other tools and people: SWE-bench's report.json, JUnit XML, a self-contained
    HTML page, CTRF or ATIF."""
    from agentctl.cli.reports import PAGE_FORMATS, page_report
    from agentctl.services.queries.run_reports import run_report

    current = state(ctx)
    fmt = fmt.lower()
    if public and fmt not in PAGE_FORMATS:
        raise BadInput(f"--public applies to --format {', '.join(PAGE_FORMATS)}, not {fmt}")
    with current.views() as views:
        blobs = BlobStore(current.home.artifacts)
        text = page_report(views, blobs, run_id, fmt, public=public) if fmt in PAGE_FORMATS \
            else run_report(views, blobs, run_id, fmt)
    if output is None:
        typer.echo(text, nl=False)
        return
    from agentctl.cli.reports import write_report

    write_report(output, text)


def attest(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or unique prefix.")],
    output: Annotated[Path | None, typer.Option("--output", metavar="FILE", help="Write the "
                      "bundle here instead of stdout.")] = None,
    key: Annotated[Path | None, typer.Option("--key", metavar="FILE", help="Sign with this "
                   "ed25519 PEM private key. (default: the state home's, made on first "
                   "use)")] = None,
) -> None:
    """What the run proved, as signed in-toto Statements: JSON lines of DSSE envelopes (SLSA
    provenance, a test-result per check, agentctl's run predicate) about the patch and its tree.
    Check it with `agentctl attest verify` or any in-toto tool."""
    from agentctl.cli.reports import write_report
    from agentctl.services.actions.attest import attest_run

    text = attest_run(state(ctx).store, run_id, key=key)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_report(output, text)


def open_(
    ctx: typer.Context,
    run_id: RunArgument = None,
    public: Annotated[bool, Flag("--public", help="Keep only SAFE_FOR_PUBLIC_LOG content."
                      )] = False,
) -> None:
    """Write the run page (the newest run without an id) to a temporary file and open it in
    the browser; the file's path goes to stdout."""
    from agentctl.cli.reports import open_page

    current = state(ctx)
    with current.views() as views:
        path, opened = open_page(views, current.home.artifacts, run_id, public=public)
    typer.echo(str(path))
    if not opened:
        note("no browser found here; open the file above in one")


def trace(
    ctx: typer.Context,
    run_id: RunArgument = None,
    endpoint: Annotated[str | None, typer.Option("--endpoint", metavar="URL", help="OTLP/HTTP "
                        "endpoint. (default: OTEL_EXPORTER_OTLP_ENDPOINT, then "
                        "[telemetry] otlp_endpoint)")] = None,
) -> None:
    """Export a finished run as one OpenTelemetry trace over OTLP/HTTP."""
    from agentctl.services.queries.telemetry import export_finished_run

    current = state(ctx)
    result = export_finished_run(current.store, current.config, run_id, endpoint=endpoint)
    if result.error:
        raise InfrastructureFailure(f"trace {result.trace_id} not sent: {result.error}")
    note(f"trace {result.trace_id}: {result.exported} spans sent to {result.endpoint}"
         + (f", {result.dropped} dropped" if result.dropped else ""))
