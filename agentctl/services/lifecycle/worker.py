"""Executing runs: `run start` as one use case, the lease keeper (heartbeats, cancellation),
the inline runner and workers. Written against the RunQueue port, so the same loop runs on the
store and on the in-memory fake."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Protocol

from agentctl.config import Config
from agentctl.domain import ids
from agentctl.domain.agent import AgentSpec
from agentctl.domain.cassette import Cassette
from agentctl.domain.enums import RunStatus
from agentctl.domain.errors import AgentctlError, LeaseLost
from agentctl.domain.run import Run
from agentctl.domain.transitions import TERMINAL_RUN
from agentctl.execution.work_tree import is_url
from agentctl.execution.workspaces.cache_fill import Prefetch, prefetch
from agentctl.execution.workspaces.discard import collect_deleters
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.services.attempts.attempt import StopSignal
from agentctl.services.attempts.pipeline import RunOptions, execute_attempt
from agentctl.services.lease_deadline import bounded_by
from agentctl.services.lifecycle.patient_blobs import BlobOutage, PatientBlobs
from agentctl.services.lifecycle.queue import Queue, QueueReads, QueueStore, QueueWork
from agentctl.services.lifecycle.runs import CreateStore, NewRunWork, TaskReads, create_run
from agentctl.services.ports import Lease, RunQueue

CANCEL_POLL_SECONDS = 0.5
BUSY_POLL_SECONDS = 0.2


def new_worker_id() -> str:
    """host:pid:suffix (the host name as `socket.gethostname()` gives it, without importing
    socket on every run's start-up)."""
    return f"{os.uname().nodename}:{os.getpid()}:{ids.new_id('worker')[-6:]}"


class InlineReads(QueueReads, TaskReads, Protocol):
    """The queue's reads and the task a run is created for."""


class InlineWork(QueueWork, NewRunWork, Protocol):
    """The queue's transactions and the one that queues the new run."""


class InlineStore(QueueStore, CreateStore, Protocol):
    """The part of the storage port creating a run and running it here uses (any `Storage` is
    one): `runs.create_run`'s and the `Queue`'s, together."""

    def unit_of_work(self) -> AbstractContextManager[InlineWork]: ...
    def reads(self) -> AbstractContextManager[InlineReads]: ...


def create_and_run(storage: InlineStore, config: Config, task_text: str, *, agent: AgentSpec,
                   detach: bool, options: RunOptions, base_commit: str | None = None) -> Run:
    """A queued run under a frozen spec and, unless detached, executed here until it ends (or
    waits for a human), with these options: `run start` (services/lifecycle/start.py) and the demo."""
    run = create_run(storage, config, task_text, agent=agent, base_commit=base_commit)
    if detach:
        return run
    spec = run.execution_spec  # a cold tree cache is filled while the run is leased and set up
    early = prefetch_base(spec.repository, spec.base_commit, options.tree_cache)
    try:
        return run_inline(Queue(storage), run.run_id,
                          ttl_seconds=config.worker.lease_ttl_seconds, options=options)
    finally:
        if early is not None:
            early.stop()


def prefetch_base(repository: str, commit: str, cache: TreeCache | None) -> Prefetch | None:
    """Start checking a run's base out into the tree cache, to be run here on views of it;
    None where there is nothing to fill (see `cache_fill.prefetch`). Stop it once the run ends."""
    return prefetch(repository, commit, is_url=is_url(repository), cache=cache,
                    scratch=Path(tempfile.gettempdir()))


class LeaseKeeper:
    """Heartbeats from a background thread while the attempt works, and watches for cancellation.

    A lost lease or a cancellation sets the stop signal; the attempt's processes are killed by
    the waits that poll it.
    """

    def __init__(self, queue: RunQueue, lease: Lease, stop: StopSignal) -> None:
        self.queue, self.lease, self.stop = queue, lease, stop
        self._done = threading.Event()
        self._expires = time.monotonic() + lease.ttl_seconds  # as far as we know
        self._thread = threading.Thread(target=self._loop, name="agentctl-heartbeat", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()

    def expires(self) -> float:
        """When the lease runs out (`time.monotonic`), as far as the last heartbeat knows."""
        return self._expires

    def _loop(self) -> None:
        with bounded_by(self.expires):  # a heartbeat never waits on the store past the lease
            self._beat()

    def _beat(self) -> None:
        interval = self.lease.ttl_seconds / 3
        outage = self.queue.outage_errors()
        due = time.monotonic() + interval
        while not self._done.wait(min(CANCEL_POLL_SECONDS, interval)):
            try:
                if time.monotonic() >= due:
                    cancel = self.queue.heartbeat(self.lease).cancel
                    due = time.monotonic() + interval
                else:
                    cancel = self.queue.cancel_request(self.lease.run_id)
            except LeaseLost:
                self.stop.lose_lease()
                return
            except outage:  # the database or its disk is away: every write stays fenced
                if time.monotonic() >= self._expires:
                    self.stop.lose_lease()  # we cannot know we still hold it: stop working
                    return
                continue
            self._expires = time.monotonic() + self.lease.ttl_seconds
            if cancel is not None and self.stop.cancellation is None:
                self.stop.cancel(*cancel)


def execute_leased(queue: RunQueue, lease: Lease, options: RunOptions) -> Run | None:
    """One attempt under a held lease; None if the lease was lost on the way."""
    run = queue.run(lease.run_id)
    if run.replay_of is not None:  # its model answers from the record, never the network
        options = replace(options, cassette=replay_cassette(options, run.replay_of))
    stop = StopSignal()
    if options.observer is not None:
        options.observer.attempt(lease.attempt_number)
    outage = BlobOutage(options.artifact_outage_seconds, stopped=stop, warn=options.progress)
    ledger = queue.ledger(lease, run.spec_digest,
                          blobs=lambda blobs: PatientBlobs(blobs, outage))
    with LeaseKeeper(queue, lease, stop) as keeper, bounded_by(keeper.expires):
        return execute_attempt(ledger, run, stop, options)


def replay_cassette(options: RunOptions, replay_of: str) -> Cassette:
    """A fresh cassette of the run a replay replays; an empty one (which answers no request)
    when this worker cannot read it."""
    if options.cassettes is not None:
        try:
            return options.cassettes(replay_of)
        except (AgentctlError, OSError, ValueError) as error:
            options.progress(f"the recording of {replay_of} cannot be read: {error}")
    return Cassette([], {})


def run_inline(queue: RunQueue, run_id: str, *, ttl_seconds: float, options: RunOptions,
               sleep: Callable[[float], None] = time.sleep) -> Run:
    """Execute one run in this process, attempt after attempt, until it ends (or needs a human)."""
    worker_id = new_worker_id()
    while True:
        current = queue.run(run_id)
        if current.status in TERMINAL_RUN or current.status is RunStatus.NEEDS_APPROVAL:
            return current
        if current.status is not RunStatus.QUEUED:
            # Another worker holds it: wait for it to end, or for its lease to run out.
            queue.reap_expired()
            sleep(BUSY_POLL_SECONDS)
            continue
        if current.not_before is not None and current.not_before > queue.now():
            wait = (current.not_before - queue.now()).total_seconds()
            options.progress(f"retrying in {wait:.1f}s (backoff)")
            sleep(max(0.0, wait))
        lease = queue.lease(worker_id=worker_id, ttl_seconds=ttl_seconds, run_id=run_id)
        if lease is None:  # another worker was quicker
            continue
        execute_leased(queue, lease, options)


def work(queue: RunQueue, *, worker_id: str, ttl_seconds: float, poll_seconds: float,
         options: RunOptions, once: bool = False, max_runs: int | None = None,
         on_run: Callable[[Run | None], None] = lambda _run: None,
         on_idle: Callable[[], None] = lambda: None,
         sleep: Callable[[float], None] = time.sleep) -> int:
    """Lease and execute queued runs until told to stop; the number of attempts executed.

    Every claim first reclaims expired leases, so a run whose worker died is picked up again.
    `sleep` is how an idle worker waits (the store's wake-ups); `on_idle` is told once each
    time the worker runs out of work (at its first pass that finds nothing to lease after it
    started, executed a run or met an outage), when everything it did before is on record:
    what an operator, or a test, waits for instead of a guess of how long the work takes.
    With `once`, return when nothing is queued any more (runs waiting out a backoff count as
    queued, and so do runs other workers hold: they may come back).
    """
    executed = 0
    unreachable = 0  # consecutive passes the store could not be reached or written
    idle = False  # whether on_idle was told since the worker last did something
    outage = queue.outage_errors()
    while max_runs is None or executed < max_runs:
        try:
            lease = queue.lease(worker_id=worker_id, ttl_seconds=ttl_seconds)
            if lease is not None:
                on_run(execute_leased(queue, lease, options))
                executed += 1
                unreachable = 0
                idle = False
                continue
            if once and not queue.waiting():
                return executed
            unreachable = 0
            collect_deleters()  # idle: no finished deleter of ours stays a zombie
            if not idle:
                idle = True
                on_idle()
        except outage as error:
            # The database went away (restart, network) or cannot be written (a full disk, a
            # read-only artifact store): wait and try again. An attempt cut short by it was
            # fenced throughout; its lease expires and it is reclaimed.
            unreachable += 1
            idle = False
            options.progress(f"store unavailable, retrying: {queue.outage_text(error)}")
            sleep(min(poll_seconds * 2 ** unreachable, 10.0))
            continue
        sleep(poll_seconds)
    return executed
