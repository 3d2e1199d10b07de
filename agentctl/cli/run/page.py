"""`agentctl run open`: the run page in the browser."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag, RunArgument
from agentctl.cli.output import note
from agentctl.cli.reports import open_page
from agentctl.store.views import Views


def open_(
    ctx: typer.Context,
    run_id: RunArgument = None,
    public: Annotated[bool, Flag("--public", help="Keep only SAFE_FOR_PUBLIC_LOG content."
                      )] = False,
) -> None:
    """Write the run page (the newest run without an id) to a temporary file and open it in
    the browser; the file's path goes to stdout."""
    current = state(ctx)
    with current.views(Views) as views:
        path, opened = open_page(views, current.home.artifacts, run_id, public=public)
    typer.echo(str(path))
    if not opened:
        note("no browser found here; open the file above in one")
