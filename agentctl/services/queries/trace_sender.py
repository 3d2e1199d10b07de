"""A worker's traces, sent on a thread of their own: a collector that is down or hangs never
holds the worker's loop, which hands each ended run over and goes on to the next.

The hand-over is a queue of at most `CAPACITY` runs (a run that finds it full has its trace
dropped). Each export has a short timeout and no retry (`SHORT_TIMEOUT_SECONDS`, or
`[telemetry] timeout_seconds` when shorter). Once an export fails, the collector is taken for
down for `DOWN_SECONDS`: the traces of that time are dropped untried, each said on its run's
record, so no backlog builds up behind it. When the worker ends, the exports left are waited for
as long as they keep finishing: only a trace on its way to the collector is given up on, once
it has been out longer than its timeout and `GRACE_SECONDS` (reading a run and loading the
exporter take what the machine's load makes them take, and always end); the rest are dropped.
Every drop is counted; the first failure of each outage is said once.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agentctl.config import Config
from agentctl.domain.errors import AgentctlError
from agentctl.domain.run import Run
from agentctl.services.queries.telemetry import TraceStore, has_ended
from agentctl.services.queries.trace_export import export_and_record, record_unsent

CAPACITY = 64  # runs waiting for their trace to be sent
# Below the exporter's first retry backoff (0.8 s at least): it gives up instead of retrying.
SHORT_TIMEOUT_SECONDS = 0.75
DOWN_SECONDS = 30.0  # after a failed export, traces are dropped untried for this long
GRACE_SECONDS = 0.25  # at the end, for the next export to finish beyond its own timeout


class SenderStore(TraceStore, Protocol):
    """The part of the storage port a worker's traces use (any `Storage` is one): sending one
    (`TraceStore`), and what an outage of the store looks like, which a trace outlives."""

    def outage_errors(self) -> tuple[type[BaseException], ...]: ...


@dataclass(frozen=True, slots=True)
class SendCounts:
    """Traces of a worker's runs: sent, and dropped (refused, collector down or hanging, the
    queue full, or still waiting when the worker ended)."""

    sent: int = 0
    dropped: int = 0


class TraceSender:
    """Sends the traces of ended runs to `endpoint` off the caller's thread; `close` at the end."""

    def __init__(self, storage: SenderStore, config: Config, endpoint: str, *,
                 report: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._storage, self._config, self._endpoint = storage, config, endpoint
        self._report, self._clock = report, clock
        self._timeout = min(config.telemetry.timeout_seconds, SHORT_TIMEOUT_SECONDS)
        self._queue: queue.Queue[Run | None] = queue.Queue(CAPACITY)
        self._changed = threading.Condition()
        self._handed = self._handled = self._sent = self._dropped = 0
        self._down_until: float | None = None
        self._closed = False
        self._thread: threading.Thread | None = None
        self._on_wire_since: float | None = None  # when the trace under way went out, if it did

    def submit(self, run: Run) -> None:
        """Send the run's trace if it has ended; never waits."""
        if not has_ended(run):
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="agentctl-traces",
                                            daemon=True)
            self._thread.start()
        with self._changed:
            try:
                self._queue.put_nowait(run)
            except queue.Full:
                self._dropped += 1
                return
            self._handed += 1

    def close(self) -> SendCounts:
        """Wait for the exports left while they keep finishing; the counts, what is left being
        dropped. The thread, if stuck on a collector, is left to end with the process."""
        patience = self._timeout + GRACE_SECONDS
        with self._changed:
            while self._handled < self._handed:
                self._changed.wait(patience)
                since = self._on_wire_since
                if since is not None and self._clock() - since > patience:
                    break  # the collector holds it: the rest is dropped
            self._closed = True
            self._dropped += self._handed - self._handled
            counts = SendCounts(self._sent, self._dropped)
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            pass  # the thread stops at its next run: it is closed
        return counts

    def _work(self) -> None:
        while True:
            run = self._queue.get()
            with self._changed:
                if run is None or self._closed:
                    return
            sent = self._send(run)
            with self._changed:
                if self._closed:
                    return  # counted as dropped by `close`
                self._handled += 1
                self._sent += sent
                self._dropped += not sent
                self._changed.notify_all()

    def _wire(self, out: bool) -> None:
        with self._changed:
            self._on_wire_since = self._clock() if out else None
            self._changed.notify_all()

    def _send(self, run: Run) -> bool:
        faults: tuple[type[BaseException], ...] = (AgentctlError,
                                                   *self._storage.outage_errors())
        if self._down_until is not None and self._clock() < self._down_until:
            try:
                record_unsent(self._storage, run, self._endpoint,
                              "not sent: the collector failed a moment ago")
            except faults:
                pass  # the count says it
            return False
        try:
            result = export_and_record(self._storage, self._config, run, self._endpoint,
                                       timeout=self._timeout, on_wire=self._wire)
        except faults as error:
            self._report(f"trace of {run.run_id} not sent: {error}")
            return False
        if result.error is None:
            self._down_until = None
            return True
        if self._down_until is None:
            self._report(f"WARNING: trace of {run.run_id} not sent: {result.error}; traces are "
                         f"dropped untried for {DOWN_SECONDS:g} s")
        self._down_until = self._clock() + DOWN_SECONDS
        return False
