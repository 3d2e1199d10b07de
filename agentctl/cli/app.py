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
from agentctl.cli.options import Flag

app = typer.Typer(
    name="agentctl",
    help="The execution plane and audit trail for autonomous coding agents.\n\n"
    "Turn a request into a Task, run an agent on a pinned commit in a throw-away workspace, "
    "verify and judge the patch, and decide one explainable Verdict.",
    no_args_is_help=True,
    add_completion=False,
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
) -> None:
    current = state(ctx)
    current.home_option, current.config_option = home, config


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
app.command("hook", context_settings=bridge.CONTEXT)(bridge.hook)
app.add_typer(bridge.mcp_app, name="mcp")
