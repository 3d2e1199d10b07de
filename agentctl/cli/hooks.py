"""`agentctl hook claude|codex|gemini` and `agentctl mcp serve`: the native agents' way into a run.

Both are launched by the claude/codex adapters with the attempt's socket, attempt id and their
own key (`--socket S --attempt A --key K`). `agentctl hook` is also answered before Typer is
even imported (see `main`): it runs once per tool call.
"""

from typing import Annotated

import typer

from agentctl.cli.options import PASS_THROUGH
from agentctl.hooks import mcp_server
from agentctl.hooks.hook import main as hook_main

mcp_app = typer.Typer(help="agentctl's guarded tools as an MCP server.", no_args_is_help=True)


def hook(ctx: typer.Context, agent: Annotated[str, typer.Argument(
        metavar="AGENT", help="claude, codex or gemini")]) -> None:
    """The PreToolUse/PostToolUse hook: reads the agent's hook JSON on stdin, answers with the
    run's decision in the agent's format. Any error denies: one line on stderr, exit 2."""
    raise typer.Exit(hook_main([agent, *ctx.args]))


@mcp_app.command("serve", context_settings=PASS_THROUGH)
def serve(ctx: typer.Context) -> None:
    """Serve fs_read, fs_write, fs_replace, fs_delete, fs_rename, patch_apply and shell_run on
    stdio; every call is a ToolCall of the run (--socket S --attempt A --key K)."""
    raise typer.Exit(mcp_server.main(list(ctx.args)))
