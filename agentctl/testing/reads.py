"""Reads of what an InMemoryStorage committed: the read side of the fake."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from agentctl.domain.artifact import Artifact
from agentctl.domain.clock import to_iso
from agentctl.domain.enums import RunStatus
from agentctl.domain.errors import NotFound
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Attempt, Run
from agentctl.domain.serialize import to_json
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.task import Task
from agentctl.domain.transitions import ACTIVE_RUN
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.services.ports import RunRecord
from agentctl.services.unit_of_work import CallRow, StepRow
from agentctl.testing.tables import LIVE_ATTEMPT, CommittedTable, column_value

if TYPE_CHECKING:
    from agentctl.testing import InMemoryStorage

R = TypeVar("R")


class InMemoryReads:
    """Reads of what was committed."""

    def __init__(self, storage: InMemoryStorage) -> None:
        self._storage = storage

    def __enter__(self) -> InMemoryReads:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def _where(self, table: CommittedTable[R], run_id: str, order: Callable[[R], object] | None = None,
               ) -> tuple[R, ...]:
        with self._storage.lock:
            found: Iterable[R] = [r for r in table.rows.values()
                                  if column_value(r, "run_id") == run_id]
        return tuple(sorted(found, key=order) if order else found)  # type: ignore[arg-type]

    def task(self, text: str) -> Task:
        return self._storage.tasks.rows[self._storage.resolve("task", text)]

    def run(self, text: str | None) -> Run:
        runs = self._storage.runs.rows
        if text is None:
            if not runs:
                raise NotFound("there are no runs yet; start one with 'agentctl run start TASK'")
            return runs[max(runs)]
        return runs[self._storage.resolve("run", text)]

    def cancel_request(self, run_id: str) -> tuple[str, str] | None:
        run = self.run(run_id)
        if run.cancel_requested_by is None:
            return None
        return run.cancel_requested_by, run.cancel_reason or ""

    def waiting(self) -> bool:
        with self._storage.lock:
            return any(run.status in (RunStatus.QUEUED, *ACTIVE_RUN)
                       for run in self._storage.runs.rows.values())

    def pull_requests(self, run_id: str) -> list[PullRequest]:
        return sorted(self._where(self._storage.pull_requests, run_id), key=lambda pr: pr.pr_id)

    def approvals(self, run_id: str) -> list[Approval]:
        return sorted(self._where(self._storage.approvals, run_id), key=lambda a: a.approval_id)

    def attempts(self, run_id: str) -> list[Attempt]:
        return list(self._where(self._storage.attempts, run_id, lambda a: a.attempt_number))

    def steps(self, run_id: str) -> list[Step]:
        return list(self._where(self._storage.steps, run_id,
                                lambda s: (s.attempt_id, s.sequence_number)))

    def tool_calls(self, run_id: str) -> list[ToolCall]:
        return list(self._where(self._storage.tool_calls, run_id))

    def artifacts(self, run_id: str) -> list[Artifact]:
        return list(self._where(self._storage.artifacts, run_id, lambda a: a.artifact_id))

    def verdict(self, run_id: str) -> Verdict | None:
        found = self._where(self._storage.verdicts, run_id)
        return found[-1] if found else None

    def patch(self, run_id: str) -> Patch | None:
        found = self._where(self._storage.patches, run_id, lambda p: p.patch_id)
        return found[-1] if found else None

    def verification(self, run_id: str) -> VerificationReport | None:
        found = self._where(self._storage.verifications, run_id,
                            lambda v: v.verification_report_id)
        return found[-1] if found else None

    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]:
        with self._storage.lock:
            found = self._storage.artifacts.rows
            return {one: found[one] for one in artifact_ids if one in found}

    def step_tree_rows(self, run_id: str) -> list[StepRow]:
        """The records in their stored form, as the store would give the columns."""
        return [StepRow(step.step_id, step.attempt_id, step.sequence_number, step.type.value,
                        step.status.value, step.title, to_iso(step.started_at),
                        to_iso(step.ended_at), step.failure_code,
                        json.dumps(dict(step.attributes), separators=(",", ":"),
                                   ensure_ascii=False))
                for step in self.steps(run_id)]

    def call_tree_rows(self, run_id: str) -> list[CallRow]:
        return [CallRow(call.step_id, call.tool_call_id, call.tool_name, call.arguments_json,
                        call.decision.value, call.matched_rule, call.denial_reason,
                        None if call.result is None else json.dumps(to_json(call.result)),
                        call.approved_by, to_iso(call.requested_at), to_iso(call.completed_at),
                        call.spec_digest)
                for call in self.tool_calls(run_id)]

    def event_head(self) -> tuple[int, str] | None:
        with self._storage.lock:
            last = self._storage.events[-1] if self._storage.events else None
        return None if last is None else (last.seq, last.hash)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """No unit of work lands while it is held."""
        with self._storage.lock:
            yield

    def lease_due(self, now: datetime) -> bool:
        with self._storage.lock:
            return any(a.status in LIVE_ATTEMPT and a.lease_expires_at <= now
                       for a in self._storage.attempts.rows.values())

    def ended_attempt_directories(self, directories: Sequence[str]) -> list[str]:
        storage = self._storage
        with storage.lock:
            ended = {directory for attempt_id, directory in storage.attempt_directories.items()
                     if storage.attempts.rows[attempt_id].status not in LIVE_ATTEMPT}
        return [directory for directory in directories if directory in ended]

    def record(self, run_id: str) -> RunRecord:
        storage = self._storage
        return RunRecord(
            run=self.run(run_id), attempts=tuple(self.attempts(run_id)),
            steps=tuple(self.steps(run_id)), tool_calls=tuple(self.tool_calls(run_id)),
            artifacts=tuple(self.artifacts(run_id)), verdict=self.verdict(run_id),
            patches=self._where(storage.patches, run_id, lambda p: p.patch_id),
            verifications=self._where(storage.verifications, run_id,
                                      lambda v: v.verification_report_id),
            judgements=self._where(storage.judgements, run_id, lambda j: j.judge_report_id),
            events=tuple(e for e in storage.events if e.run_id == run_id),
        )
