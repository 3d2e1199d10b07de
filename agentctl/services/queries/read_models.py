"""The read models the commands show, built from the storage port's reads: typed values that
cross to the command line, which alone shapes them into JSON or text (`cli/documents.py`).

A busy run has tens of thousands of steps and tool calls; decoding each into its record and
encoding it back doubled the work of `run show --tree` (issue 9). So the tree is read as the
stored columns (the port's `StepRow`, `CallRow`: text as stored, times in the stored ISO form)
and only put together here; the records stay the typed path for everything that decides something.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from agentctl.domain.artifact import Artifact
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import ChangedFile, Step, ToolCall, changed_files_of
from agentctl.domain.task import Task
from agentctl.domain.verdict import Approval, Verdict, approvals_link
from agentctl.domain.verification import VerificationReport
from agentctl.services.queries.failure_output import (
    LogFiles,
    OutputTails,
    StepOutput,
    failure_tails,
)
from agentctl.services.unit_of_work import CallRow, StepRow


class RunReads(Protocol):
    """The reads the read models are built from (`Storage.reads()` gives them)."""

    def task(self, text: str) -> Task: ...
    def verdict(self, run_id: str) -> Verdict | None: ...
    def pull_requests(self, run_id: str) -> list[PullRequest]: ...
    def approvals(self, run_id: str) -> list[Approval]: ...
    def attempts(self, run_id: str) -> list[Attempt]: ...
    def steps(self, run_id: str) -> list[Step]: ...
    def tool_calls(self, run_id: str) -> list[ToolCall]: ...
    def artifacts(self, run_id: str) -> list[Artifact]: ...
    def verification(self, run_id: str) -> VerificationReport | None: ...
    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]: ...
    def patch(self, run_id: str) -> Patch | None: ...
    def step_tree_rows(self, run_id: str) -> list[StepRow]:
        """Every step of the run, in attempt and step order."""
        ...

    def call_tree_rows(self, run_id: str) -> list[CallRow]: ...


class StepView(NamedTuple):
    """A step of the tree: a named tuple, as there are tens of thousands of them."""

    row: StepRow
    attributes: Mapping[str, object]
    changed_files: tuple[ChangedFile, ...]
    artifacts: tuple[Artifact, ...]  # what the step produced
    call: CallRow | None


@dataclass(frozen=True, slots=True)
class AttemptView:
    attempt: Attempt
    steps: tuple[StepView, ...]


@dataclass(frozen=True, slots=True)
class ForbiddenEdits:
    """The changes the patch boundary forbade: the attempt whose patch it checked, and each
    forbidden path's rule, so the step and hunk that made the change can be marked."""

    attempt_id: str
    patch: Patch

    def rule(self, attempt_id: str, change: ChangedFile) -> str | None:
        if attempt_id != self.attempt_id:
            return None
        paths = (change.path, change.old_path) if change.old_path else (change.path,)
        return self.patch.boundary_check.forbidden_rule(*paths)


def forbidden_edits(reads: RunReads, run_id: str) -> ForbiddenEdits | None:
    """None when the run has no patch, or its patch broke no forbidden path."""
    patch = reads.patch(run_id)
    if patch is None or not patch.boundary_check.forbidden_path_violations:
        return None
    return ForbiddenEdits(attempt_id=patch.attempt_id, patch=patch)


@dataclass(frozen=True, slots=True)
class RunView:
    """`run show`: the run, its verdict and pull requests, and with the tree its attempts."""

    run: Run
    verdict: Verdict | None
    pull_requests: tuple[PullRequest, ...]
    attempts: tuple[AttemptView, ...] | None = None
    output_tails: OutputTails = field(default_factory=dict)  # failed steps', by step id
    verification: VerificationReport | None = None  # with the tree: the tests by class
    forbidden: ForbiddenEdits | None = None  # with the tree: the edits the boundary forbade


@dataclass(frozen=True, slots=True)
class Edit:
    """One step's change to a file ("which step edited `pom.xml`")."""

    step_id: str
    sequence_number: int
    tool_name: str
    tool_call_id: str | None
    change: ChangedFile
    forbidden: str | None = None  # the boundary's rule, when the change broke it


EditedBy = Mapping[str, tuple[Edit, ...]]
"""Every file the last attempt changed, and the steps that changed it, in order."""


@dataclass(frozen=True, slots=True)
class ExplainedLink:
    """A link of the verdict's chain, with the artifacts its evidence names."""

    check: str
    passed: bool
    detail: str
    evidence: tuple[Artifact, ...]


@dataclass(frozen=True, slots=True)
class FailedStep:
    """A failed step of the last attempt and the end of its output: where and why it failed."""

    sequence_number: int
    type: str
    title: str
    failure: str | None
    output_tail: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class VerdictExplanation:
    """`verdict explain`: why, link by link (the approvals' link last), and what it rests on."""

    chain: tuple[ExplainedLink, ...]
    task: Task
    verification: VerificationReport | None
    edited_by: EditedBy
    pull_requests: tuple[PullRequest, ...]
    failed_steps: tuple[FailedStep, ...] = ()


@dataclass(frozen=True, slots=True)
class VerdictView:
    """`verdict show`, and with the explanation `verdict explain`."""

    run: Run
    verdict: Verdict
    approvals: tuple[Approval, ...]
    evidence: tuple[Artifact, ...]  # the artifacts of the verdict's evidence that exist
    explanation: VerdictExplanation | None = None


def run_view(reads: RunReads, run: Run, *, tree: bool = False,
             files: LogFiles | None = None) -> RunView:
    """With `tree` its attempts, and with `files` (the artifact store) the output of each
    failed check too (a failed tool call's is in its record)."""
    attempts = _attempts(reads, run.run_id) if tree else None
    tails = failure_tails((_output(s, _workspace(a.steps)) for a in attempts or ()
                           for s in a.steps), files)
    return RunView(run=run, verdict=reads.verdict(run.run_id),
                   pull_requests=tuple(reads.pull_requests(run.run_id)),
                   attempts=attempts, output_tails=tails,
                   verification=reads.verification(run.run_id) if tree else None,
                   forbidden=forbidden_edits(reads, run.run_id) if tree else None)


def _attempts(reads: RunReads, run_id: str) -> tuple[AttemptView, ...]:
    produced: dict[str, list[Artifact]] = {}
    for artifact in reads.artifacts(run_id):
        produced.setdefault(artifact.produced_by_step, []).append(artifact)
    calls = {row.step_id: row for row in reads.call_tree_rows(run_id)}
    steps: dict[str, list[StepView]] = {}
    for row in reads.step_tree_rows(run_id):
        attributes = _load(row.attributes)
        steps.setdefault(row.attempt_id, []).append(StepView(
            row=row, attributes=attributes, changed_files=changed_files_of(attributes),
            artifacts=tuple(produced.get(row.step_id, ())), call=calls.get(row.step_id)))
    return tuple(AttemptView(attempt, tuple(steps.get(attempt.attempt_id, ())))
                 for attempt in reads.attempts(run_id))


def _load(text: str) -> dict[str, Any]:
    return {} if text == "{}" else dict(json.loads(text))


def verdict_view(reads: RunReads, run: Run, *, explain: bool = False,
                 files: LogFiles | None = None) -> VerdictView | None:
    """None while the run has no verdict. With `explain` and `files`, the failed steps of the
    last attempt with the end of their output."""
    verdict = reads.verdict(run.run_id)
    if verdict is None:
        return None
    approvals = tuple(reads.approvals(run.run_id))
    wanted = set(verdict.evidence) | {a for link in verdict.chain for a in link.evidence}
    artifacts = reads.artifacts_by_id(sorted(wanted))
    explanation = None
    if explain:
        approved = approvals_link(approvals)
        chain = tuple(
            ExplainedLink(check=link.check, passed=link.passed, detail=link.detail,
                          evidence=tuple(artifacts[a] for a in dict.fromkeys(link.evidence)
                                         if a in artifacts))
            for link in verdict.chain)
        chain += (ExplainedLink(check=approved.check, passed=approved.passed,
                                detail=approved.detail, evidence=()),)
        explanation = VerdictExplanation(
            chain=chain, task=reads.task(run.task_id),
            verification=reads.verification(run.run_id),
            edited_by=edited_by(reads, run.run_id),
            pull_requests=tuple(reads.pull_requests(run.run_id)),
            failed_steps=failed_steps(reads, run.run_id, files))
    return VerdictView(run=run, verdict=verdict, approvals=approvals,
                       evidence=tuple(artifacts[a] for a in verdict.evidence if a in artifacts),
                       explanation=explanation)


def edited_by(reads: RunReads, run_id: str) -> EditedBy:
    """Every file the last attempt changed, and the steps (with their tools) that changed it;
    a change the patch boundary forbade carries its rule."""
    attempts = reads.attempts(run_id)
    if not attempts:
        return {}
    last = max(attempts, key=lambda attempt: attempt.attempt_number).attempt_id
    calls = {call.step_id: call for call in reads.tool_calls(run_id)}
    forbidden = forbidden_edits(reads, run_id)
    edits: dict[str, list[Edit]] = {}
    for step in reads.steps(run_id):
        if step.attempt_id != last:
            continue
        call = calls.get(step.step_id)
        for change in step.changed_files:
            edits.setdefault(change.path, []).append(Edit(
                step_id=step.step_id, sequence_number=step.sequence_number,
                tool_name=call.tool_name if call else step.type.value,
                tool_call_id=call.tool_call_id if call else None, change=change,
                forbidden=forbidden.rule(last, change) if forbidden else None))
    return {path: tuple(found) for path, found in edits.items()}


def failed_steps(reads: RunReads, run_id: str, files: LogFiles | None) -> tuple[FailedStep, ...]:
    """The last attempt's failed steps, in order, each with the end of its output."""
    attempts = _attempts(reads, run_id)
    if not attempts:
        return ()
    last = max(attempts, key=lambda view: view.attempt.attempt_number)
    failed = [step for step in last.steps if step.row.status not in ("SUCCEEDED", "STARTED")]
    workspace = _workspace(last.steps)
    tails = failure_tails((_output(step, workspace) for step in failed), files)
    return tuple(FailedStep(
        sequence_number=step.row.sequence_number, type=step.row.type,
        title=step.call.tool_name if step.call else step.row.title,
        failure=_failure_of(step), output_tail=tails.get(step.row.step_id, ()))
        for step in failed)


def _output(step: StepView, workspace: str | None) -> StepOutput:
    return StepOutput(step.row.step_id, step.row.status,
                      step.call.result if step.call else None, step.artifacts, workspace,
                      step.row.failure_code)


def _workspace(steps: Sequence[StepView]) -> str | None:
    """The attempt's private directory, as its PREPARE_WORKSPACE step recorded it."""
    for step in steps:
        if step.row.type == "PREPARE_WORKSPACE":
            path = step.attributes.get("path")
            return path if isinstance(path, str) else None
    return None


def _failure_of(step: StepView) -> str | None:
    failure = step.attributes.get("failure")
    if isinstance(failure, str):
        return failure
    if step.call is not None and step.call.result is not None:
        error = json.loads(step.call.result).get("error")
        return str(error) if error else None
    return None
