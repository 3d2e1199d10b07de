"""`agentctl events`: the append-only log of every state change."""


import json
import sys
import time
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag, FullOption
from agentctl.cli.output import emit_json, out
from agentctl.cli.render.style import printable
from agentctl.store.task_views import TaskViews


def events(
    ctx: typer.Context,
    run: Annotated[str | None, typer.Option("--run", metavar="ID", help="Only this run.")] = None,
    task: Annotated[str | None, typer.Option("--task", metavar="ID", help="Only this task.")] = None,
    follow: Annotated[bool, Flag("--follow", "-f", help="Keep printing new events "
                      "until interrupted.")] = False,
    full: FullOption = False,
    as_json: Annotated[bool, Flag("--json", help="Print a JSON array (with --follow: "
                       "one JSON object per line).")] = False,
) -> None:
    """Show the event log, oldest first."""
    with state(ctx).views(TaskViews) as views:
        run_id = views.resolve("run", run) if run else None
        task_id = views.resolve("task", task) if task else None
        rows = [_event(r) for r in views.events(run_id=run_id, task_id=task_id)]
        short = {} if as_json or full else {
            **views.short_ids("run", sorted({str(r["runId"]) for r in rows if r["runId"]})),
            **views.short_ids("task", sorted({str(r["taskId"]) for r in rows if r["taskId"]}))}
    if as_json and not follow:
        emit_json(rows)
        return
    for row in rows:
        _print(row, as_json, short)
    if not follow:
        if not rows and not as_json:
            out().print("no events")
        return
    last = _seq(rows[-1]) if rows else 0
    try:
        while True:
            time.sleep(0.5)
            with state(ctx).views(TaskViews) as views:
                fresh = [_event(r) for r in views.events(run_id=run_id, task_id=task_id,
                                                          after_seq=last)]
            for row in fresh:
                _print(row, as_json, {})
                last = _seq(row)
    except KeyboardInterrupt:
        return


def _event(row: object) -> dict[str, object]:
    keys = ("seq", "type", "task_id", "run_id", "attempt_id", "step_id", "payload", "created_at",
            "prev_hash", "hash")
    names = ("seq", "type", "taskId", "runId", "attemptId", "stepId", "payload", "createdAt",
             "prevHash", "hash")
    event = {name: row[key] for key, name in zip(keys, names, strict=False)}  # type: ignore[index]
    event["payload"] = json.loads(str(event["payload"]))
    return event


def _seq(event: dict[str, object]) -> int:
    seq = event["seq"]
    assert isinstance(seq, int)
    return seq


def _print(event: dict[str, object], as_json: bool, short: dict[str, str]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(event) + "\n")
    else:

        about = str(event["runId"] or event["taskId"] or "")
        when = str(event["createdAt"])[:19].replace("T", " ")
        told = describe(event["payload"])  # type: ignore[arg-type]
        sys.stdout.write(printable(f"{event['seq']:>6}  {when}  {event['type']:<19} "
                                   f"{short.get(about, about)}{'  ' + told if told else ''}")
                         + "\n")
    sys.stdout.flush()


# Who acted, in the words of each event's payload.
_ACTORS = ("by", "createdBy", "decidedBy", "approvedBy", "requestedBy", "owner")


def describe(payload: dict[str, object]) -> str:
    """Who did it and to what: `by dana: APPROVED (read it)`, `fs.replace DENIED_BY_POLICY:
    ...`; empty when the payload names neither."""
    actor = next((str(payload[k]) for k in _ACTORS if payload.get(k)), None)
    subject = " ".join(str(payload[k]) for k in ("tool", "decision", "outcome", "status", "title")
                       if payload.get(k))
    why = payload.get("reason")
    parts = [f"by {actor}" if actor else "", subject]
    text = ": ".join(p for p in parts if p)
    if why:
        text += f" ({why})" if text else str(why)
    return text
