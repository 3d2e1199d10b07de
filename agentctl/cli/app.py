"""The root command: global options and one sub-command group per noun, each imported only
when it runs (see `cli/lazy.py`): `agentctl --help` imports none of them."""


import os
from typing import Annotated

import typer

from agentctl import __version__
from agentctl.cli import output
from agentctl.cli.help import SectionedGroup
from agentctl.cli.lazy import Lazy
from agentctl.cli.options import PASS_THROUGH, Flag
from agentctl.cli.root_options import RootOptions

# Each command's first help paragraph is repeated here so that the root help imports nothing;
# tests/e2e/test_help.py checks it against the command's own help.
COMMANDS = {
    "init": Lazy("agentctl.cli.init:init", "Write .agentctl.toml (every key documented, with "
                 "its default) and create the state home."),
    "worker": Lazy("agentctl.cli.worker:worker", "Execute queued runs (`run start --detach`), "
                   "many workers to one store."),
    "events": Lazy("agentctl.cli.events:events", "Show the event log, oldest first."),
    "demo": Lazy("agentctl.cli.demo:demo", "Run the seed's four scenarios on a bundled "
                 "payments-service: a migration that needs review, a forbidden workflow edit, "
                 "a dependency mirror timeout, a broken assertion."),
    "doctor": Lazy("agentctl.cli.doctor:doctor", "Check the sandbox, its limits, the views, the "
                   "agent CLIs, the store and a forge token. Exit 1 when a required part does not work (an agent CLI "
                   "or a token that is missing only warns)."),
    "hook": Lazy("agentctl.cli.hooks:hook", "The PreToolUse/PostToolUse hook: reads the "
                 "agent's hook JSON on stdin, answers with the run's decision in the agent's "
                 "format. Any error denies: one line on stderr, exit 2.", PASS_THROUGH),
    "task": Lazy("agentctl.cli.task.commands:app", "Submit and inspect tasks: structured, executable "
                 "intent."),
    "session": Lazy("agentctl.cli.session:app", "Sessions: messy conversations that lead to "
                    "structured tasks."),
    "run": Lazy("agentctl.cli.run.commands:app", "Runs: one execution of a task on a pinned commit, "
                "ending in a verdict."),
    "verdict": Lazy("agentctl.cli.verdict.commands:app", "Verdicts: whether a run's patch is fit for a "
                    "PR, and why."),
    "artifact": Lazy("agentctl.cli.artifact:app", "Artifacts: content-addressed evidence, "
                     "verified by sha256."),
    "pr": Lazy("agentctl.cli.pr:app", "Pull requests: a downstream action on an eligible "
               "verdict."),
    "audit": Lazy("agentctl.cli.audit:app", "Integrity checks over the audit trail."),
    "attest": Lazy("agentctl.cli.attest:app", "Attestations: the signing key, and verifying a "
                   "bundle."),
    "db": Lazy("agentctl.cli.db:app", "The database schema: its revision and upgrades."),
    "cache": Lazy("agentctl.cli.cache:app", "The state home's caches: checked-out bases and "
                  "baselines."),
    "sandbox": Lazy("agentctl.cli.sandbox:app", "The OS sandbox every process of a run "
                    "executes in."),
    "mcp": Lazy("agentctl.cli.hooks:mcp_app", "agentctl's guarded tools as an MCP server."),
}


class Root(SectionedGroup):
    """The root group: the commands above, plumbing in a help section of its own."""

    lazy = COMMANDS


app = typer.Typer(
    name="agentctl",
    help="The execution plane and audit trail for autonomous coding agents.\n\n"
    "Turn a request into a Task, run an agent on a pinned commit in a throw-away workspace, "
    "verify and judge the patch, and decide one explainable Verdict.",
    cls=Root,  # commands imported when run; plumbing in a help section of its own
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
    ctx.obj = RootOptions(home=home, config=config)  # a command's `state(ctx)` reads them
    if quiet or verbose or no_color:
        _presentation(quiet=quiet, verbose=verbose, no_color=no_color)


def _presentation(*, quiet: bool, verbose: bool, no_color: bool) -> None:
    output.verbosity = -1 if quiet else 1 if verbose else 0
    if no_color:
        os.environ["NO_COLOR"] = "1"  # read by Rich, and by the tools a run starts
