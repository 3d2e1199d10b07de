"""The `agentctl run` group: its commands registered in the order `agentctl run --help` lists
them."""


import typer

from agentctl.cli.run import cancel, exports, replay, show, start

app = typer.Typer(help="Runs: one execution of a task on a pinned commit, ending in a verdict.",
                  no_args_is_help=True)
app.command()(start.start)
app.command()(replay.replay)
app.command("list")(show.list_)
app.command()(show.show)
app.command()(show.diff)
app.command()(cancel.cancel)
app.command()(exports.report)
app.command()(exports.attest)
app.command("open")(exports.open_)
app.command()(exports.trace)
