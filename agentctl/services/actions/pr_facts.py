"""What a PR body (and an attestation) may say about a run, read once from the records.

Artifacts reach the body only when SAFE_FOR_PR and verified by hash; the rest comes from records
that hold no logs: steps' changed files, denied tool calls, the spend a native agent reported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from agentctl.domain.agent import AgentSpec
from agentctl.domain.artifact import Artifact, is_safe_for_pr
from agentctl.domain.enums import StepType, ToolDecision
from agentctl.domain.errors import IntegrityError, NotFound
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.task import Task
from agentctl.domain.verdict import Approval, Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.services.actions.pr_body import UNAVAILABLE, DeniedCall, Disclosure, FileEdit, PrFacts
from agentctl.services.ports import Blobs


class FactReads(Protocol):
    """The records a PR body's facts are read from."""

    def task(self, text: str) -> Task: ...
    def verdict(self, run_id: str) -> Verdict | None: ...
    def approvals(self, run_id: str) -> list[Approval]: ...
    def attempts(self, run_id: str) -> list[Attempt]: ...
    def steps(self, run_id: str) -> list[Step]: ...
    def tool_calls(self, run_id: str) -> list[ToolCall]: ...
    def artifacts(self, run_id: str) -> list[Artifact]: ...
    def verification(self, run_id: str) -> VerificationReport | None: ...


def gather(blobs: Blobs, views: FactReads, run: Run) -> tuple[PrFacts, list[Artifact]]:
    """The facts, and the run's artifacts (the caller picks the patch from them)."""
    verdict = views.verdict(run.run_id)
    if verdict is None:
        raise NotFound(f"run {run.run_id} has no verdict yet (status {run.status.value})")
    artifacts = views.artifacts(run.run_id)
    safe = [a for a in artifacts if is_safe_for_pr(a)]
    steps = views.steps(run.run_id)
    calls = views.tool_calls(run.run_id)
    attempts = views.attempts(run.run_id)
    last = max(attempts, key=lambda a: a.attempt_number).attempt_id if attempts else None
    tools = {call.step_id: call.tool_name for call in calls}
    edits = [FileEdit(path=change.path, step=step.sequence_number,
                      tool=tools.get(step.step_id, step.type.value),
                      binary_size=change.binary_size)
             for step in steps if step.attempt_id == last for change in step.changed_files]
    denied = [DeniedCall(tool=call.tool_name, rule=call.matched_rule,
                         reason=call.denial_reason or call.decision.value)
              for call in calls if call.decision is not ToolDecision.ALLOWED]
    cost, tokens = _spend(steps)
    facts = PrFacts(
        task=views.task(run.task_id), run=run, verdict=verdict,
        approvals=views.approvals(run.run_id),
        touched=_json(blobs, safe, "touched-files.json"),
        verification=_json(blobs, safe, "verifier-report.json"),
        report=views.verification(run.run_id),
        judge=_json(blobs, safe, "judge-report.json"),
        evidence=[a for a in safe if a.artifact_id in verdict.evidence],
        edits=edits, denied=denied, cost_usd=cost, tokens=tokens,
        disclosure=_disclosure(run),
    )
    return facts, artifacts


def _spend(steps: Sequence[Step]) -> tuple[float | None, int | None]:
    cost: float | None = None
    tokens: int | None = None
    for step in steps:
        if step.type is not StepType.SUMMARIZE_LOG:
            continue
        value, count = step.attributes.get("costUsd"), step.attributes.get("tokens")
        if isinstance(value, (int, float)):
            cost = (cost or 0.0) + float(value)
        if isinstance(count, int):
            tokens = (tokens or 0) + count
    return cost, tokens


def _disclosure(run: Run) -> Disclosure:
    """The agent and model as the spec froze them; runs do not record the agent CLI's version
    yet, so it reads "unavailable" rather than a guess."""
    spec = run.execution_spec
    settings = spec.agent_settings
    agent = AgentSpec.frozen(spec.agent, spec.agent_digest).shared(spec.repository)
    return Disclosure(agent=agent, model=(settings.model if settings and settings.model
                                               else UNAVAILABLE), cli_version=UNAVAILABLE)


def _json(blobs: Blobs, safe: list[Artifact], name: str) -> dict[str, object] | None:
    """The newest SAFE_FOR_PR artifact of that name, parsed; nothing else reaches a PR body."""
    for artifact in reversed(safe):
        if artifact.name == name:
            problem = blobs.verify(artifact.uri, artifact.sha256)
            if problem:
                raise IntegrityError(f"artifact {artifact.artifact_id} ({name}): {problem}")
            try:
                parsed: dict[str, object] = json.loads(b"".join(blobs.open_chunks(artifact.uri)))
                return parsed
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise IntegrityError(f"artifact {artifact.artifact_id} ({name}) is not valid "
                                     "JSON") from None
    return None
