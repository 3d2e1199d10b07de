"""`agentctl run attest`: what a run proved, as signed in-toto Statements."""


from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.reports import write_report
from agentctl.services.actions.attest import attest_run


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
    text = attest_run(state(ctx).store, run_id, key=key)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_report(output, text)
