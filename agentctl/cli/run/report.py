"""`agentctl run report`: a finished run as SWE-bench's report.json, JUnit XML, an HTML page,
CTRF or ATIF."""


from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag, RunArgument
from agentctl.cli.reports import PAGE_FORMATS, page_report, write_report
from agentctl.domain.errors import BadInput
from agentctl.services.queries.run_reports import run_report
from agentctl.store.blobs import BlobStore
from agentctl.store.views import Views


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
    current = state(ctx)
    fmt = fmt.lower()
    if public and fmt not in PAGE_FORMATS:
        raise BadInput(f"--public applies to --format {', '.join(PAGE_FORMATS)}, not {fmt}")
    with current.views(Views) as views:
        blobs = BlobStore(current.home.artifacts)
        text = page_report(views, blobs, run_id, fmt, public=public) if fmt in PAGE_FORMATS \
            else run_report(views, blobs, run_id, fmt)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_report(output, text)
