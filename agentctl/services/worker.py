"""Executing runs: the lease keeper (heartbeats, cancellation), the inline runner and workers."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType

from agentctl.domain import ids
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import RunStatus
from agentctl.domain.errors import LeaseLost
from agentctl.domain.run import Run
from agentctl.domain.transitions import ACTIVE_RUN, TERMINAL_RUN
from agentctl.domain.verdict import Evidence, VerdictInputs, decide_verdict
from agentctl.services.attempt import StopSignal
from agentctl.services.pipeline import RunOptions, execute_attempt
from agentctl.services.recorder import AttemptRecorder
from agentctl.services.runs import Lease, heartbeat, lease_run, reap_expired
from agentctl.store import Store
from agentctl.store.views import Views

CANCEL_POLL_SECONDS = 0.5


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{ids.new_id('worker')[-6:]}"


class LeaseKeeper:
    """Heartbeats from a background thread while the attempt works, and watches for cancellation.

    A lost lease or a cancellation sets the stop signal; the attempt's processes are killed by
    the waits that poll it.
    """

    def __init__(self, store: Store, lease: Lease, stop: StopSignal) -> None:
        self.store, self.lease, self.stop = store, lease, stop
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="agentctl-heartbeat", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        interval = self.lease.ttl_seconds / 3
        due = time.monotonic() + interval
        while not self._done.wait(min(CANCEL_POLL_SECONDS, interval)):
            try:
                if time.monotonic() >= due:
                    beat = heartbeat(self.store, self.lease)
                    due = time.monotonic() + interval
                else:
                    beat = None
                reason = beat.cancel_reason if beat else self._cancel_reason()
            except LeaseLost:
                self.stop.lose_lease()
                return
            if reason and not self.stop.cancel_reason:
                self.stop.cancel(reason)

    def _cancel_reason(self) -> str | None:
        with Views(self.store.home) as views:
            request = views.cancel_request(self.lease.run_id)
        return f"cancelled by {request[0]}: {request[1]}" if request else None


def execute_leased(store: Store, lease: Lease, options: RunOptions) -> Run | None:
    """One attempt under a held lease; None if the lease was lost on the way."""
    with Views(store.home) as views:
        run = views.run(lease.run_id)
    stop = StopSignal()
    recorder = AttemptRecorder(store, lease, spec_digest=run.spec_digest)
    with LeaseKeeper(store, lease, stop):
        try:
            return execute_attempt(recorder, run, stop, options)
        except KeyboardInterrupt:
            _interrupted(recorder, run, release=options.release_on_interrupt)
            raise


def _interrupted(recorder: AttemptRecorder, run: Run, *, release: bool) -> None:
    """Ctrl-C or SIGTERM: an inline run ends CANCELLED at once; a worker hands its run back to
    the queue (an infrastructure failure of this attempt) instead of waiting for the lease."""
    spec = run.execution_spec
    reason = "worker stopped" if release else "interrupted by the user (Ctrl-C)"
    inputs = VerdictInputs(autonomy=spec.autonomy_level, judge_policy=spec.judge_policy,
                           patch=None, verification=None, judge=None, evidence=Evidence())
    try:
        if release:
            final = decide_verdict(replace(inputs, infrastructure_failure=reason))
            recorder.fail(code="worker_stopped", reason=reason, final=final)
        else:
            recorder.finish(decide_verdict(replace(inputs, cancelled=reason)))
    except LeaseLost:
        pass  # someone else holds the run now; nothing of ours may be written


def run_inline(store: Store, run: Run, *, ttl_seconds: float, options: RunOptions,
               clock: Clock = utcnow) -> Run:
    """Execute one run in this process, attempt after attempt, until it ends (or needs a human)."""
    worker_id = new_worker_id()
    while True:
        with Views(store.home) as views:
            current = views.run(run.run_id)
        if current.status in TERMINAL_RUN or current.status is RunStatus.NEEDS_APPROVAL:
            return current
        if current.status is not RunStatus.QUEUED:
            # Another worker holds it: wait for it to end, or for its lease to run out.
            reap_expired(store, clock=clock)
            time.sleep(0.2)
            continue
        if current.not_before and current.not_before > clock():
            wait = (current.not_before - clock()).total_seconds()
            options.progress(f"retrying in {wait:.1f}s (backoff)")
            time.sleep(max(0.0, wait))
        lease = lease_run(store, worker_id=worker_id, ttl_seconds=ttl_seconds,
                          run_id=run.run_id, clock=clock)
        if lease is None:
            continue
        execute_leased(store, lease, options)


def work(store: Store, *, worker_id: str, ttl_seconds: float, poll_seconds: float,
         options: RunOptions, once: bool = False, max_runs: int | None = None,
         on_run: Callable[[Run | None], None] = lambda _run: None,
         clock: Clock = utcnow) -> int:
    """Lease and execute queued runs until told to stop; the number of attempts executed.

    Every pass first reaps expired leases, so a run whose worker died is picked up again.
    With `once`, return when nothing is queued any more (runs waiting out a backoff count as
    queued).
    """
    executed = 0
    while max_runs is None or executed < max_runs:
        reap_expired(store, clock=clock)
        lease = lease_run(store, worker_id=worker_id, ttl_seconds=ttl_seconds, clock=clock)
        if lease is not None:
            on_run(execute_leased(store, lease, options))
            executed += 1
            continue
        if once:
            with Views(store.home) as views:
                waiting = views.runs(limit=1, status=RunStatus.QUEUED.value)
            if not waiting and not _any_active(store):
                return executed
        time.sleep(poll_seconds)
    return executed


def _any_active(store: Store) -> bool:
    """Runs another worker holds may still come back to the queue (infra failure, lost lease)."""
    with Views(store.home) as views:
        return any(views.runs(limit=1, status=status.value) for status in ACTIVE_RUN)
