"""The root command: global options and one sub-command group per noun."""


from typing import Annotated

import typer

from agentctl import __version__
from agentctl.cli import (
    artifact,
    attest,
    audit,
    bridge,
    db,
    demo,
    doctor,
    events,
    init,
    pr,
    run,
    sandbox,
    session,
    task,
    verdict,
    worker,
)
from agentctl.cli.context import state
from agentctl.cli.help import SectionedGroup
from agentctl.cli.options import Flag

app = typer.Typer(
    name="agentctl",
    help="The execution plane and audit trail for autonomous coding agents.\n\n"
    "Turn a request into a Task, run an agent on a pinned commit in a throw-away workspace, "
    "verify and judge the patch, and decide one explainable Verdict.",
    cls=SectionedGroup,  # plumbing commands in a help section of their own
    no_args_is_help=True,  # bare `agentctl` prints help (and exits 0: see main)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain text: one paragraph per docstring paragraph, brackets literal
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    home: Annotated[str | None, typer.Option(
        "--home", metavar="DIR", help="State home: database and artifacts. (env: AGENTCTL_HOME; "
        "default: the user data dir)")] = None,
    config: Annotated[str | None, typer.Option(
        "--config", metavar="FILE", help="Config file. (env: AGENTCTL_CONFIG; default: the nearest "
        ".agentctl.toml upwards, then the user config dir)")] = None,
    version: Annotated[bool, Flag(
        "--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
    quiet: Annotated[bool, Flag("-q", "--quiet", help="No progress and no hints on stderr "
                                "(errors and warnings stay).")] = False,
    verbose: Annotated[bool, Flag("-v", "--verbose", help="Keep every progress update as a "
                                  "line.")] = False,
    no_color: Annotated[bool, Flag("--no-color", help="No colours. (env: NO_COLOR)")] = False,
) -> None:
    current = state(ctx)
    current.home_option, current.config_option = home, config
    if quiet or verbose or no_color:
        _presentation(quiet=quiet, verbose=verbose, no_color=no_color)


def _presentation(*, quiet: bool, verbose: bool, no_color: bool) -> None:
    import os

    from agentctl.cli import output

    output.verbosity = -1 if quiet else 1 if verbose else 0
    if no_color:
        os.environ["NO_COLOR"] = "1"  # read by Rich, and by the tools a run starts


app.command("init")(init.init)
app.add_typer(task.app, name="task")
app.add_typer(session.app, name="session")
app.add_typer(run.app, name="run")
app.command("worker")(worker.worker)
app.add_typer(verdict.app, name="verdict")
app.add_typer(artifact.app, name="artifact")
app.add_typer(pr.app, name="pr")
app.command("events")(events.events)
app.add_typer(audit.app, name="audit")
app.add_typer(attest.app, name="attest")
app.add_typer(db.app, name="db")
app.command("demo")(demo.demo)
app.add_typer(sandbox.app, name="sandbox")
app.command("doctor")(doctor.doctor)
app.command("hook", context_settings=bridge.CONTEXT)(bridge.hook)
app.add_typer(bridge.mcp_app, name="mcp")
