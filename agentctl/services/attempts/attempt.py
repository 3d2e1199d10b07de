"""What one attempt carries through the pipeline: its ledger, spec, workspace and stop signal."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.artifact import Artifact
from agentctl.domain.cassette import Cassette
from agentctl.domain.ending import Cancelled, LostLease
from agentctl.domain.enums import StepStatus, StepType
from agentctl.domain.errors import LeaseLost
from agentctl.domain.redaction import Redactor
from agentctl.domain.spec import ExecutionSpec
from agentctl.domain.step import CANCELLED, Step
from agentctl.execution.agents.attribution import ChangeTracker
from agentctl.execution.reaper import Process, sweep
from agentctl.execution.sandboxing.sandbox import Sandbox
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.execution.workspaces.workspace import AttemptDirs
from agentctl.services.ports import (
    Approver,
    AttemptLedger,
    NewArtifact,
    Produced,
    RunObserver,
    StepDone,
    StepEnd,
)


class StopSignal:
    """Set when the run is cancelled or the lease is lost; polled by every long wait."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.cancellation: Cancelled | None = None
        self.lease_lost = False

    def cancel(self, by: str, reason: str) -> None:
        self.cancellation = Cancelled(by=by, reason=reason)
        self._event.set()

    def lose_lease(self) -> None:
        self.lease_lost = True
        self._event.set()

    def __call__(self) -> bool:
        return self._event.is_set()

    def ending(self) -> Cancelled | LostLease | None:
        """Why the attempt must stop now, if it must: the lease went to another, or a person
        asked."""
        if self.lease_lost:
            return LostLease("the lease was lost while the attempt worked")
        return self.cancellation


Progress = Callable[[str], None]


@dataclass
class AttemptContext:
    ledger: AttemptLedger
    spec: ExecutionSpec
    dirs: AttemptDirs  # the attempt's private directory: work tree, scratch, agentctl's git
    env: Mapping[str, str]
    redactor: Redactor
    stop: StopSignal
    progress: Progress
    redact_logs_up_to: int
    approver: Approver | None = None
    spared: frozenset[Process] = frozenset()  # processes that ran before the attempt began
    baseline_cache: Path | None = None  # where baselines on a base commit are kept across runs
    tree_cache: TreeCache | None = None  # checked-out bases the run's trees are views of
    sandbox: Sandbox | None = None  # None: the run's processes run unconfined (mode off)
    protected: tuple[Path, ...] = ()  # hidden from them: state home, original repository
    state_home: Path | None = None  # agentctl's home (its caches), when the caller named it
    trace_endpoint: str | None = None  # OTLP endpoint: native agents nest their spans in ours
    cassette: Cassette | None = None  # a replay's recorded model exchanges
    observer: RunObserver | None = None  # told when each step ends
    concurrent_baseline: bool = False  # the base's checks may run beside the candidate's
    # which files each agent call changed, once the agent runs: what no call did is named
    tracker: ChangeTracker | None = None

    def reap(self) -> int:
        """Kill whatever the attempt's processes left running (a `setsid` daemon included);
        how many there were. Work beside the pipeline keeps its processes from it (a check on
        the base: `run_to_file(kept=True)`; the base's checkout: `git.kept_from_sweeps`)."""
        return sweep(self.spared)

    def reap_since(self, running: frozenset[Process]) -> int:
        """Kill what started since `running` was taken and still runs: what one call left."""
        return sweep(self.spared | running)

    @property
    def workspace(self) -> Path:
        """The agent's work tree."""
        return self.dirs.tree

    @property
    def scratch(self) -> Path:
        """Private, outside the work tree: logs, the task file, tool output."""
        return self.dirs.scratch

    @contextmanager
    def step(self, type_: StepType, title: str, *, live: bool = False) -> Iterator[StepRecord]:
        """Record a step around a block; the block may fail it, note attributes, add artifacts
        and the records it produced, which the ledger stores with the step's end.

        A `live` step (a clone, a verifier command: long, worth watching) is on record when it
        starts; a short one is recorded, with its start, when it ends.
        """
        record = StepRecord(self.ledger.begin_step(type_, title, live=live))
        started = time.monotonic()
        try:
            yield record
        except LeaseLost:
            raise  # our writes are refused now; the step stays as the last holder left it
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: a person stopped it, nothing broke
            record.fail(CANCELLED, CANCELLED)
            record.close(self.ledger)
            raise
        except BaseException as error:
            record.fail("interrupted", f"{type(error).__name__}: {error}")
            record.close(self.ledger)
            raise
        record.close(self.ledger)
        if self.observer is not None:
            self.observer.step_done(StepDone(type_, title, record.status,
                                             time.monotonic() - started, record.detail()))


class StepRecord:
    """A step being recorded: how it ends, and what it produced."""

    def __init__(self, step: Step) -> None:
        self.step = step
        self.status = StepStatus.SUCCEEDED
        self.failure_code: str | None = None
        self.attributes: dict[str, object] = {}
        self.artifacts: list[NewArtifact] = []
        self.produced: list[Produced] = []
        self.stored: list[Artifact] = []

    def fail(self, code: str, detail: str, status: StepStatus = StepStatus.FAILED) -> None:
        self.status, self.failure_code = status, code
        self.attributes["failure"] = detail[:500]

    def note(self, **attributes: object) -> None:
        self.attributes.update(attributes)

    def detail(self) -> str | None:
        """In a few words: the failure, else a check's test counts."""
        failure = self.attributes.get("failure")
        if failure:
            return str(failure).splitlines()[0][:120]
        tests = self.attributes.get("tests")
        if isinstance(tests, dict) and tests:
            return ", ".join(f"{count} {name}" for name, count in tests.items() if count)
        return None

    def add(self, artifact: NewArtifact) -> None:
        self.artifacts.append(artifact)

    def record(self, produced: Produced) -> None:
        """A record this step made (the patch, a report), stored with the step's end."""
        self.produced.append(produced)

    def close(self, ledger: AttemptLedger) -> None:
        self.stored = ledger.end_step(self.step, StepEnd(
            status=self.status, failure_code=self.failure_code, attributes=self.attributes,
            artifacts=self.artifacts, produced=self.produced))
