"""`agentctl worker`: lease queued runs and execute them; survive and reclaim crashed workers."""


import signal
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.long_work import begin_long_work
from agentctl.cli.options import Flag
from agentctl.cli.output import note

if TYPE_CHECKING:
    from agentctl.domain.run import Run
from agentctl.cli.artifact import artifact_content
from agentctl.services.actions.replay import cassette_of
from agentctl.services.admin.caches import runs_tree_cache
from agentctl.services.attempts.baseline_cache import FOLDER as BASELINES
from agentctl.services.attempts.pipeline import RunOptions
from agentctl.services.lifecycle.queue import Queue
from agentctl.services.lifecycle.sweep import sweep_in_background
from agentctl.services.lifecycle.worker import new_worker_id, work
from agentctl.services.queries.telemetry import configured_endpoint
from agentctl.services.queries.trace_sender import TraceSender
from agentctl.store.wakeup import WakeUps


def worker(
    ctx: typer.Context,
    once: Annotated[bool, Flag("--once", help="Drain what is queued, then exit.")] = False,
    max_runs: Annotated[int | None, typer.Option("--max-runs", metavar="N", min=1,
                        help="Exit after executing N attempts.")] = None,
    lease_ttl: Annotated[float | None, typer.Option("--lease-ttl", metavar="S", min=0.5,
                         help="Lease time-to-live in seconds. (default: worker.lease_ttl_seconds)"
                         )] = None,
    poll: Annotated[float | None, typer.Option("--poll", metavar="S", min=0.05,
                    help="Seconds between looks at the queue. (default: worker.poll_seconds)"
                    )] = None,
) -> None:
    """Execute queued runs (`run start --detach`), many workers to one store.

    Each run is leased by exactly one worker; a run whose worker died is taken over after its
    lease expires. SIGTERM or Ctrl-C hands the current run back to the queue.
    """

    current = state(ctx)
    config = current.config
    worker_id = new_worker_id()
    root = current.home.artifacts
    endpoint = configured_endpoint(config)
    options = RunOptions(redact_logs_up_to=config.verification.redact_logs_up_to_bytes,
                         release_on_interrupt=True, progress=lambda text: note(f"  {text}"),
                         baseline_cache=current.home.root / BASELINES,
                         concurrent_baseline=config.verification.baseline_concurrent,
                         tree_cache=runs_tree_cache(current.home.root, config.store.tree_cache_mb),
                         protected=(current.home.root,),
                         trace_endpoint=endpoint,
                         artifact_outage_seconds=config.store.artifact_outage_seconds,
                         cassettes=lambda original: cassette_of(
                             current.store, original,
                             lambda artifact: b"".join(artifact_content(root, artifact))))
    # SIGTERM stops the worker like Ctrl-C: the current attempt is released to the queue.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    begin_long_work()  # what is made from here on is the runs'
    note(f"worker {worker_id} started")
    sweeper = sweep_in_background(current.store, report=lambda text: note(f"  {text}"))

    traces = None if endpoint is None else TraceSender(
        current.store, config, endpoint, report=lambda text: note(f"  {text}"))

    def report(run: "Run | None") -> None:
        if run is not None:
            note(f"{run.run_id}: {run.status.value}")
            if traces is not None:  # sent off this loop: a collector never holds a run
                traces.submit(run)

    wakeups = WakeUps(current.store.home)
    try:
        executed = work(Queue(current.store), worker_id=worker_id,
                        ttl_seconds=lease_ttl or config.worker.lease_ttl_seconds,
                        poll_seconds=poll or config.worker.poll_seconds,
                        options=options, once=once, max_runs=max_runs, on_run=report,
                        on_idle=lambda: note(f"worker {worker_id} idle: nothing to lease"),
                        sleep=wakeups.wait)
    except KeyboardInterrupt:
        note(f"worker {worker_id} stopped")
        raise typer.Exit(130) from None
    finally:
        wakeups.close()
        if traces is not None:
            counts = traces.close()
            note(f"worker {worker_id} traces: {counts.sent} sent, {counts.dropped} dropped")
    sweeper.join()  # not when interrupted: what is left is swept at the next start
    note(f"worker {worker_id} done: {executed} attempt(s)")
