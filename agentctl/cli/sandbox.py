"""`agentctl sandbox check`: what of the OS sandbox works on this machine."""


import typer

from agentctl.cli.context import state
from agentctl.cli.options import JsonOption
from agentctl.cli.output import emit_json, out
from agentctl.cli.render.style import escape
from agentctl.services.admin.machine import SANDBOX_HINT, sandbox_check

app = typer.Typer(help="The OS sandbox every process of a run executes in.",
                  no_args_is_help=True)


@app.command()
def check(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Start a process in the sandbox here and say what works: bubblewrap (which binary), the
    namespaces, the limits (cgroups or rlimits), and the config's profile. Exit 1 when runs
    could not start sandboxed on this machine."""
    status = sandbox_check()
    settings = state(ctx).config.sandbox
    document = {
        "works": status.works, "message": status.message,
        "bubblewrap": str(status.bubblewrap.path) if status.bubblewrap else None,
        "origin": status.bubblewrap.origin if status.bubblewrap else None,
        "version": status.version, "limits": status.cgroups, "mode": settings.mode.value,
        "readOnly": list(settings.read_only), "writable": list(settings.writable),
        "networkAllow": list(settings.network.allow),
        "hint": None if status.works else SANDBOX_HINT,
    }
    if as_json:
        emit_json(document)
    else:
        mark = "[green]works[/]" if status.works else f"[red]cannot start[/]: {escape(status.message)}"
        lines = [
            f"sandbox      {mark}",
            f"bubblewrap   {escape(document['bubblewrap'] or 'not found')}"
            + (f" ({status.bubblewrap.origin})" if status.bubblewrap else ""),
            f"limits       {escape(status.cgroups)}",
            f"mode         {settings.mode.value}"
            + ("  [yellow](runs are unsandboxed and need a human approval)[/]"
               if settings.mode.value == "off" else ""),
            f"network      {escape(', '.join(settings.network.allow) or 'none (proxy denies all)')}",
            f"read-only    {escape(', '.join(settings.read_only) or '-')} + the PATH's toolchains",
        ]
        if not status.works:
            lines.append(f"hint         {escape(SANDBOX_HINT)}")
        for line in lines:
            out().print(line, highlight=False)
    raise typer.Exit(0 if status.works else 1)

