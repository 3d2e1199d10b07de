"""`agentctl audit verify`: prove the event log has not been edited or cut."""


import typer

from agentctl.cli.context import state
from agentctl.cli.options import JsonOption

app = typer.Typer(help="Integrity checks over the audit trail.", no_args_is_help=True)


@app.command()
def verify(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Re-hash the event chain; exit 3 naming the first broken event."""
    from agentctl.cli.output import emit_json, out
    from agentctl.domain.errors import IntegrityError
    from agentctl.domain.events import find_chain_breaks

    with state(ctx).views() as views:
        rows = list(views.event_chain())
        head = views.event_head()
    breaks = find_chain_breaks(rows, head)
    if as_json:
        emit_json({"ok": not breaks, "events": len(rows),
                   "head": {"seq": head[0], "hash": head[1]} if head else None,
                   "breaks": [{"seq": b.seq, "problem": b.problem} for b in breaks]})
    if breaks:
        first = breaks[0]
        raise IntegrityError(f"event log broken at event {first.seq}: {first.problem}"
                             + (f" (and {len(breaks) - 1} more)" if len(breaks) > 1 else ""))
    if not as_json:
        last = rows[-1] if rows else None
        out().print(f"ok: {len(rows)} events, chain intact"
                    + (f", head {last[0]} {last[-1][:16]}" if last else ""))
