"""`agentctl run replay`: a recorded claude/codex run again, its model answering from the
record, and whether it came out the same."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated

import typer

from agentctl import config as configs
from agentctl.cli.context import state
from agentctl.cli.long_work import begin_long_work
from agentctl.cli.options import Flag, JsonOption
from agentctl.cli.output import emit_json, hint, live_status, out
from agentctl.cli.run.document import run_document_of
from agentctl.cli.run.replay_view import artifact_reader, print_replay, replay_keys
from agentctl.services.actions.replay import queue_replay, replay_run
from agentctl.services.attempts.pipeline import RunOptions


def replay(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id or unique prefix.")],
    config_file: Annotated[Path | None, typer.Option("--config", metavar="FILE", help=(
        "A what-if: replay under this config's policy and list every decision that "
        "changed."))] = None,
    detach: Annotated[bool, Flag("--detach", help="Queue the replay for `agentctl worker` "
                      "and return at once; `run show REPLAY` reports it once it ended.")
                      ] = False,
    as_json: JsonOption = False,
) -> None:
    """Run a recorded claude/codex run again, its model answering from the recorded exchanges
    (no model, no key): the same task, base commit and agent CLI. Says whether the replay is
    identical (tool calls, decisions, patch tree); exit 1 when it is not."""
    current = state(ctx)
    what_if = configs.load(config_file) if config_file is not None else None
    if detach:
        run = queue_replay(current.store, run_id, what_if=what_if)
        document = run_document_of(current, run)
        if as_json:
            emit_json(document)
        else:
            out().print(f"{run.run_id} queued (a replay of {run.replay_of})")
        hint("a worker executes it: agentctl worker --once")
        raise typer.Exit(0)

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    begin_long_work()  # what is made from here on is the replay's
    with live_status(f"replay of {run_id}") as progress:
        options = RunOptions(progress=progress, observer=progress,
                             redact_logs_up_to=current.config.verification.redact_logs_up_to_bytes,
                             protected=(current.home.root,))
        report = replay_run(current.store, current.config, run_id, what_if=what_if,
                            options=options, read=artifact_reader(current))
    document = {**run_document_of(current, report.run), **replay_keys(report)}
    if as_json:
        emit_json(document)
    else:
        print_replay(report)
    raise typer.Exit(0 if report.identical else 1)
