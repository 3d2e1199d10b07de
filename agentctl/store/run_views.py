"""The reads of runs and their evidence (attempts, steps, tool calls, artifacts, patches,
verifications, judgements, verdicts, pull requests), decoded into records: what `task list`,
`task show`, `artifact list` and `verdict show` need beside the tasks.

Their records (the run, the verdict and all it is built of) cost more to import than `events`
takes to run, which reads through `task_views.TaskViews` and never loads this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from agentctl.domain.clock import to_iso
from agentctl.domain.enums import RunStatus
from agentctl.domain.errors import NotFound
from agentctl.store.rows import evidence as evidence_rows
from agentctl.store.rows import runs as run_rows
from agentctl.store.task_views import R, Row, TaskViews, given_filters

if TYPE_CHECKING:
    from agentctl.domain.artifact import Artifact
    from agentctl.domain.judge import JudgeReport
    from agentctl.domain.patch import Patch
    from agentctl.domain.pull_request import PullRequest
    from agentctl.domain.run import Attempt, Run
    from agentctl.domain.step import Step, ToolCall
    from agentctl.domain.verdict import Approval, Verdict
    from agentctl.domain.verification import VerificationReport

_LIVE = {"live_1": "STARTING", "live_2": "ACTIVE"}
"""The attempt statuses that hold a lease (`AttemptStatus`, checked by a test)."""


class RunViews(TaskViews):
    def run_statuses(self) -> dict[str, str]:
        return {str(run_id): str(status) for run_id, status in self._tuples("run_statuses")}

    def ended_attempt_directories(self, directories: Sequence[str]) -> list[str]:
        """Which of these directories were recorded by attempts that are no longer live (an
        indexed read each)."""
        return [str(row[0]) for directory in directories
                for row in self._tuples("ended_attempt_directory", directory=directory, **_LIVE)]

    def lease_due(self, now: datetime) -> bool:
        """Whether a live attempt's lease ran out by `now`."""
        return bool(self._tuples("lease_due", now=to_iso(now), **_LIVE))

    def attempt_span(self) -> tuple[str | None, str | None]:
        """When the first attempt started and the last ended."""
        found = self._tuples("attempt_span")
        return (found[0][0], found[0][1]) if found else (None, None)

    # --- runs -------------------------------------------------------------------------------
    def runs(self, *, limit: int, task_id: str | None = None, status: RunStatus | None = None,
             repository: str | None = None) -> list[Run]:
        given = given_filters(task_id=task_id, status=status.value if status else None,
                              repository=repository)
        return self._records(run_rows.run_from_row, f"runs:{','.join(sorted(given))}", **given,
                             limit=limit)

    def run(self, text: str | None) -> Run:
        """A run by id prefix, or the newest run when `text` is None."""
        if text is None:
            newest = self.runs(limit=1, repository=self.repository)
            if newest:
                return newest[0]
            if self.repository is not None:
                raise NotFound(f"there are no runs of {self.repository} yet; start one with "
                               "'agentctl run start TASK', or name a run")
            raise NotFound("there are no runs yet; start one with 'agentctl run start TASK'")
        run_id = self.resolve("run", text)
        return self._one(run_rows.run_from_row, "run", f"no run {run_id}", run_id=run_id)

    def cancel_request(self, run_id: str) -> tuple[str, str] | None:
        """(who, why) when someone asked to cancel the run; a narrow read, polled often."""
        found = self._tuples("cancel_request", run_id=run_id)
        if not found or found[0][0] is None:
            return None
        return str(found[0][0]), str(found[0][1])

    def attempts(self, run_id: str) -> list[Attempt]:
        return self._records(run_rows.attempt_from_row, "attempts", run_id=run_id)

    def steps(self, run_id: str) -> list[Step]:
        return self._records(run_rows.step_from_row, "steps", run_id=run_id)

    def tool_calls(self, run_id: str) -> list[ToolCall]:
        return self._records(run_rows.tool_call_from_row, "tool_calls", run_id=run_id)

    def artifacts(self, run_id: str | None = None) -> list[Artifact]:
        if run_id is None:
            return self._records(run_rows.artifact_from_row, "all_artifacts")
        return self._records(run_rows.artifact_from_row, "artifacts", run_id=run_id)

    def artifact(self, text: str) -> Artifact:
        artifact_id = self.resolve("artifact", text)
        return self._one(run_rows.artifact_from_row, "artifact", f"no artifact {artifact_id}",
                         artifact_id=artifact_id)

    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]:
        """Each one an indexed read of its own: a verdict names a handful."""
        found = [artifact for one in dict.fromkeys(artifact_ids) for artifact in
                 self._records(run_rows.artifact_from_row, "artifact", artifact_id=one)]
        return {a.artifact_id: a for a in found}

    def patches(self, run_id: str) -> list[Patch]:
        return self._records(evidence_rows.patch_from_row, "patches", run_id=run_id)

    def patch(self, run_id: str) -> Patch | None:
        return _last(self.patches(run_id))

    def verifications(self, run_id: str) -> list[VerificationReport]:
        held = self._verifications
        if held is not None and run_id in held:
            return list(held[run_id])
        found = self._records(evidence_rows.verification_report_from_row, "verifications",
                              run_id=run_id)
        if held is not None:
            held[run_id] = found
        return list(found)

    def verification(self, run_id: str) -> VerificationReport | None:
        return _last(self.verifications(run_id))

    def judgements(self, run_id: str) -> list[JudgeReport]:
        return self._records(evidence_rows.judge_report_from_row, "judgements", run_id=run_id)

    def judgement(self, run_id: str) -> JudgeReport | None:
        return _last(self.judgements(run_id))

    def verdict(self, run_id: str) -> Verdict | None:
        return _last(self._records(evidence_rows.verdict_from_row, "verdicts", run_id=run_id))

    def approvals(self, run_id: str) -> list[Approval]:
        return self._records(evidence_rows.approval_from_row, "approvals", run_id=run_id)

    def pull_requests(self, run_id: str) -> list[PullRequest]:
        return self._records(evidence_rows.pull_request_from_row, "pull_requests", run_id=run_id)

    def repositories(self, task_ids: Sequence[str]) -> dict[str, str | None]:
        """The repository of each task, for listings that show where a run worked (an indexed
        read each: a listing names a page of them)."""
        return {task_id: row[0] for task_id in dict.fromkeys(task_ids)
                for row in self._tuples("task_repository", task_id=task_id)}

    def run_summaries(self, run_ids: Sequence[str]) -> dict[str, Row]:
        """Verdict status and eligibility per run, for listings."""
        return {run_id: row for run_id in dict.fromkeys(run_ids)
                for row in self._rows("run_summary", run_id=run_id)}


def _last(items: list[R]) -> R | None:
    return items[-1] if items else None

