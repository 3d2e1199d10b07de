"""What one attempt carries through the pipeline: its recorder, spec, workspace and stop signal."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.artifact import Artifact
from agentctl.domain.enums import StepStatus, StepType
from agentctl.domain.errors import LeaseLost
from agentctl.domain.redaction import Redactor
from agentctl.domain.run import ExecutionSpec
from agentctl.domain.step import Step
from agentctl.services.recorder import AttemptRecorder, NewArtifact
from agentctl.store.uow import UnitOfWork


class StopSignal:
    """Set when the run is cancelled or the lease is lost; polled by every long wait."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.cancel_reason: str | None = None
        self.lease_lost = False

    def cancel(self, reason: str) -> None:
        self.cancel_reason = reason
        self._event.set()

    def lose_lease(self) -> None:
        self.lease_lost = True
        self._event.set()

    def __call__(self) -> bool:
        return self._event.is_set()


@dataclass
class AttemptContext:
    recorder: AttemptRecorder
    spec: ExecutionSpec
    workspace: Path  # the clone
    scratch: Path  # private, outside the workspace: logs, task file
    env: Mapping[str, str]
    redactor: Redactor
    stop: StopSignal
    progress: Callable[[str], None]
    redact_logs_up_to: int

    @contextmanager
    def step(self, type_: StepType, title: str, *, live: bool = False) -> Iterator[StepRecord]:
        """Record a step around a block; the block may fail it, note attributes, add artifacts.

        A `live` step (a clone, a verifier command: long, worth watching) is on record when it
        starts; a short one is recorded, with its start, when it ends.
        """
        record = StepRecord(self.recorder.begin_step(type_, title, live=live))
        try:
            yield record
        except LeaseLost:
            raise  # our writes are refused now; the step stays as the last holder left it
        except BaseException as error:
            record.fail("interrupted", f"{type(error).__name__}: {error}")
            record.close(self.recorder)
            raise
        record.close(self.recorder)


class StepRecord:
    def __init__(self, step: Step) -> None:
        self.step = step
        self.status = StepStatus.SUCCEEDED
        self.failure_code: str | None = None
        self.attributes: dict[str, object] = {}
        self.artifacts: list[NewArtifact] = []
        self.stored: list[Artifact] = []
        self.also: Callable[[UnitOfWork, list[Artifact]], None] | None = None

    def fail(self, code: str, detail: str, status: StepStatus = StepStatus.FAILED) -> None:
        self.status, self.failure_code = status, code
        self.attributes["failure"] = detail[:500]

    def note(self, **attributes: object) -> None:
        self.attributes.update(attributes)

    def add(self, artifact: NewArtifact) -> None:
        self.artifacts.append(artifact)

    def close(self, recorder: AttemptRecorder) -> None:
        _, self.stored = recorder.end_step(self.step, self.status, failure_code=self.failure_code,
                                           attributes=self.attributes, artifacts=self.artifacts,
                                           also=self.also)
