"""The JSON documents of DESIGN.md §4, assembled from the read views.

Renderers for people read the same documents, so what a script sees and what a person sees
never disagree.
"""

from __future__ import annotations

from typing import Any

from agentctl.domain.artifact import Artifact
from agentctl.domain.run import Run
from agentctl.domain.serialize import to_json
from agentctl.domain.verdict import approvals_link
from agentctl.store.step_documents import changed_files, step_documents
from agentctl.store.views import Views

Document = dict[str, Any]


def run_document(views: Views, run: Run, *, tree: bool = False) -> Document:
    document: Document = to_json(run)  # type: ignore[assignment]
    verdict = views.verdict(run.run_id)
    document["verdict"] = _verdict_summary(verdict)
    # a replay made before `replayOf` was a column names its original in its policy decision
    document["replayOf"] = run.replay_of or run.policy_decision.get("replayOf")
    document["pullRequests"] = to_json(views.pull_requests(run.run_id))
    if tree:
        document["attempts"] = _attempts(views, run.run_id)
    return document


def _verdict_summary(verdict: Any) -> Document | None:
    if verdict is None:
        return None
    return {"verdictId": verdict.verdict_id, "status": verdict.status.value,
            "prEligibility": verdict.pr_eligibility.value, "reasons": list(verdict.reasons)}


def _attempts(views: Views, run_id: str) -> list[Document]:
    artifacts: dict[str, list[Document]] = {}
    for artifact in views.artifacts(run_id):
        artifacts.setdefault(artifact.produced_by_step, []).append(artifact_document(artifact))
    steps_by_attempt = step_documents(views, run_id, artifacts)
    return [
        {**to_json(attempt), "steps": steps_by_attempt.get(attempt.attempt_id, [])}  # type: ignore[dict-item]
        for attempt in views.attempts(run_id)
    ]


def artifact_document(artifact: Artifact) -> Document:
    return to_json(artifact)  # type: ignore[return-value]


def verdict_document(views: Views, run: Run, *, explain: bool = False) -> Document | None:
    verdict = views.verdict(run.run_id)
    if verdict is None:
        return None
    approvals = views.approvals(run.run_id)
    wanted = set(verdict.evidence) | {a for link in verdict.chain for a in link.evidence}
    artifacts = views.artifacts_by_id(sorted(wanted))
    document: Document = {
        "verdictId": verdict.verdict_id, "runId": run.run_id, "taskId": run.task_id,
        "status": verdict.status.value, "prEligibility": verdict.pr_eligibility.value,
        "reasons": list(verdict.reasons),
        "evidence": [artifact_document(artifacts[a]) for a in verdict.evidence if a in artifacts],
        "decidedAt": to_json(verdict.decided_at), "decidedBy": verdict.decided_by,
        "specDigest": verdict.spec_digest,
        "sandbox": to_json(run.execution_spec.sandbox),
        "approvals": [to_json(a) for a in approvals],
    }
    if explain:
        document["chain"] = [
            {"check": link.check, "passed": link.passed, "detail": link.detail,
             "evidence": [artifact_document(artifacts[a]) for a in dict.fromkeys(link.evidence)
                          if a in artifacts]}
            for link in verdict.chain
        ]
        link = approvals_link(approvals)
        document["chain"].append({"check": link.check, "passed": link.passed,
                                  "detail": link.detail, "evidence": []})
        document["task"] = to_json(views.task(run.task_id))
        document["classification"] = classification_table(views.verification(run.run_id))
        document["editedBy"] = edited_by(views, run.run_id)
        document["pullRequests"] = to_json(views.pull_requests(run.run_id))
    return document


def classification_table(report: Any) -> list[Document]:
    """Each check's class against the base and each test's, for `verdict explain`."""
    if report is None:
        return []
    return [{"check": c.name, "command": c.command, "status": c.status.value,
             "classification": c.classification.value if c.classification else None,
             "baselineCommit": c.baseline_commit, "baselineCached": c.baseline_cached,
             "tests": to_json(c.tests),
             "classifiedTests": [{"testId": t.test_id, "classification": t.classification.value,
                                  "candidate": t.candidate.value,
                                  "base": t.base.value if t.base else None,
                                  "baseKnown": t.base is not None or not t.base_unknown}
                                 for t in c.classified_tests]}
            for c in report.checks]


def edited_by(views: Views, run_id: str) -> dict[str, list[Document]]:
    """Every file the last attempt changed, and the steps (with their tools) that changed it:
    "which step edited `pom.xml`"."""
    attempts = views.attempts(run_id)
    if not attempts:
        return {}
    last = max(attempts, key=lambda attempt: attempt.attempt_number).attempt_id
    calls = {call.step_id: call for call in views.tool_calls(run_id)}
    edits: dict[str, list[Document]] = {}
    for step in views.steps(run_id):
        if step.attempt_id != last:
            continue
        call = calls.get(step.step_id)
        for entry in changed_files(step.attributes):
            edits.setdefault(str(entry.get("path")), []).append({
                "stepId": step.step_id, "sequenceNumber": step.sequence_number,
                "toolName": call.tool_name if call else step.type.value,
                "toolCallId": call.tool_call_id if call else None,
                "changeType": entry.get("changeType"), "additions": entry.get("additions"),
                "deletions": entry.get("deletions")})
    return edits
