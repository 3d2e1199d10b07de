"""The JSON documents of DESIGN.md §4, shaped from the typed read models of `services.queries.read_models`.

Renderers for people read the same documents, so what a script sees and what a person sees
never disagree.
"""

from __future__ import annotations

from typing import Any

from agentctl.cli.step_documents import step_documents
from agentctl.domain.artifact import Artifact
from agentctl.domain.run import Run
from agentctl.domain.serialize import to_json
from agentctl.domain.verdict import Verdict
from agentctl.domain.verification import VerificationReport
from agentctl.services.queries.failure_output import LogFiles
from agentctl.services.queries.read_models import (
    EditedBy,
    RunReads,
    RunView,
    VerdictView,
    run_view,
    verdict_view,
)

Document = dict[str, Any]


def run_document(reads: RunReads, run: Run, *, tree: bool = False,
                 files: LogFiles | None = None) -> Document:
    return run_view_document(run_view(reads, run, tree=tree, files=files))


def run_view_document(view: RunView) -> Document:
    document: Document = to_json(view.run)  # type: ignore[assignment]
    document["verdict"] = _verdict_summary(view.verdict)
    # a replay made before `replayOf` was a column names its original in its policy decision
    document["replayOf"] = view.run.replay_of or view.run.policy_decision.get("replayOf")
    document["pullRequests"] = to_json(list(view.pull_requests))
    if view.attempts is not None:
        document["attempts"] = [
            {**to_json(attempt.attempt),  # type: ignore[dict-item]
             "steps": step_documents(attempt, artifact_document, view.forbidden)}
            for attempt in view.attempts]
        document["classification"] = classification_table(view.verification)
        for attempt_document in document["attempts"]:
            for step in attempt_document["steps"]:
                if step["stepId"] in view.output_tails:
                    step["outputTail"] = list(view.output_tails[step["stepId"]])
    return document


def _verdict_summary(verdict: Verdict | None) -> Document | None:
    if verdict is None:
        return None
    return {"verdictId": verdict.verdict_id, "status": verdict.status.value,
            "prEligibility": verdict.pr_eligibility.value, "reasons": list(verdict.reasons)}


def artifact_document(artifact: Artifact) -> Document:
    return to_json(artifact)  # type: ignore[return-value]


def verdict_document(reads: RunReads, run: Run, *, explain: bool = False,
                     files: LogFiles | None = None) -> Document | None:
    view = verdict_view(reads, run, explain=explain, files=files)
    return None if view is None else verdict_view_document(view)


def verdict_view_document(view: VerdictView) -> Document:
    verdict, run = view.verdict, view.run
    document: Document = {
        "verdictId": verdict.verdict_id, "runId": run.run_id, "taskId": run.task_id,
        "status": verdict.status.value, "prEligibility": verdict.pr_eligibility.value,
        "reasons": list(verdict.reasons),
        "evidence": [artifact_document(a) for a in view.evidence],
        "decidedAt": to_json(verdict.decided_at), "decidedBy": verdict.decided_by,
        "specDigest": verdict.spec_digest,
        "sandbox": to_json(run.execution_spec.sandbox),
        "approvals": [to_json(a) for a in view.approvals],
    }
    explained = view.explanation
    if explained is not None:
        document["chain"] = [
            {"check": link.check, "passed": link.passed, "detail": link.detail,
             "evidence": [artifact_document(a) for a in link.evidence]}
            for link in explained.chain]
        document["task"] = to_json(explained.task)
        document["classification"] = classification_table(explained.verification)
        document["editedBy"] = edited_by_document(explained.edited_by)
        document["pullRequests"] = to_json(list(explained.pull_requests))
        document["failedSteps"] = [
            {"sequenceNumber": f.sequence_number, "type": f.type, "title": f.title,
             "failure": f.failure, "outputTail": list(f.output_tail)}
            for f in explained.failed_steps]
    return document


def classification_table(report: VerificationReport | None) -> list[Document]:
    """Each check's class against the base and each test's, for `verdict explain`."""
    if report is None:
        return []
    return [{"check": c.name, "command": c.command, "status": c.status.value,
             "durationSeconds": c.duration_seconds,
             "classification": c.classification.value if c.classification else None,
             "baselineCommit": c.baseline_commit, "baselineCached": c.baseline_cached,
             "tests": to_json(c.tests),
             "classifiedTests": [{"testId": t.test_id, "classification": t.classification.value,
                                  "candidate": t.candidate.value,
                                  "base": t.base.value if t.base else None,
                                  "baseKnown": t.base is not None or not t.base_unknown}
                                 for t in c.classified_tests]}
            for c in report.checks]


def edited_by_document(edits: EditedBy) -> dict[str, list[Document]]:
    """"Which step edited `pom.xml`": each file, and the steps (with their tools) that did."""
    return {path: [{"stepId": e.step_id, "sequenceNumber": e.sequence_number,
                    "toolName": e.tool_name, "toolCallId": e.tool_call_id,
                    "changeType": e.change.change_type.value, "additions": e.change.additions,
                    "deletions": e.change.deletions,
                    **({} if e.change.binary_size is None else
                       {"binary": True, "sizeBytes": e.change.binary_size}),
                    **({} if e.forbidden is None else {"forbidden": e.forbidden})}
                   for e in found]
            for path, found in edits.items()}
