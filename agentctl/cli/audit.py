"""`agentctl audit verify|sign`: prove the records and the event log have not been edited,
cut or rewritten."""


import typer

from agentctl.cli.context import state
from agentctl.cli.options import JsonOption
from agentctl.cli.output import emit_json, out
from agentctl.domain.errors import IntegrityError
from agentctl.store.audit import sign_store

app = typer.Typer(help="Integrity checks over the audit trail.", no_args_is_help=True)


@app.command()
def verify(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Re-hash the event chain, check every record and artifact against the event that created
    it and the chain's end against its signed checkpoint; exit 3 naming what does not verify."""
    report = state(ctx).store.audit()
    if as_json:
        checkpoint = report.checkpoint
        emit_json({
            "ok": report.ok, "events": report.events, "records": report.records,
            "head": {"seq": report.head[0], "hash": report.head[1]} if report.head else None,
            "checkpoint": {"state": report.checkpoint_state.value,
                           "seq": checkpoint.seq if checkpoint else None},
            "breaks": [{"seq": b.seq, "problem": b.problem} for b in report.breaks],
            "problems": [{"what": p.what, "problem": p.detail} for p in report.problems],
        })
    if not report.ok:
        raise IntegrityError(report.failure())
    if not as_json:
        head = f", head {report.head[0]} {report.head[1][:16]}" if report.head else ""
        out().print(f"ok: {report.events} events, chain intact{head}; {report.records} records "
                    f"match their events; checkpoint {report.checkpoint_state.value}")


@app.command()
def sign(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Sign the current head of a log that verifies: for a home that predates signing, or whose
    checkpoint was lost. Refuses (exit 3) over a log that does not verify."""

    signed = sign_store(state(ctx).store)
    if as_json:
        emit_json({"seq": signed.seq, "hash": signed.hash})
    else:
        out().print(f"signed: checkpoint at event {signed.seq}")
