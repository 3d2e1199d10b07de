"""The run tree's step documents, read as the stored columns (`Reads.step_tree_rows`,
`call_tree_rows`) and shaped by the command line, are exactly the documents of the typed
records (`to_json` of the steps and tool calls the reads decode), on each store."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from agentctl import config
from agentctl.cli.documents import artifact_document
from agentctl.cli.step_documents import _time, step_documents
from agentctl.domain.agent import AgentKind, AgentSpec
from agentctl.domain.clock import utcnow
from agentctl.domain.enums import ToolDecision, ToolOutcome
from agentctl.domain.serialize import from_json, to_json
from agentctl.domain.step import ToolResult
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_task
from agentctl.services.lifecycle.ledger import Ledger
from agentctl.services.lifecycle.runs import create_run, lease_run
from agentctl.services.ports import CallRequest
from agentctl.services.queries.read_models import run_view
from agentctl.services.unit_of_work import Reads, Storage
from agentctl.store import json_columns
from agentctl.store.rows import dump_plain


def record_documents(views: Reads, run_id: str) -> dict[str, list[dict[str, object]]]:
    """The documents as the records give them: the reference the fast read must equal."""
    calls = {call.step_id: call for call in views.tool_calls(run_id)}
    out: dict[str, list[dict[str, object]]] = {}
    for step in views.steps(run_id):
        call = calls.get(step.step_id)
        call_document = None
        if call is not None:
            call_document = {
                "toolCallId": call.tool_call_id, "toolName": call.tool_name,
                "argumentsJson": call.arguments_json, "decision": call.decision.value,
                "matchedRule": call.matched_rule, "denialReason": call.denial_reason,
                "result": None if call.result is None else {"ok": call.result.ok,
                                                            **to_json(call.result)},  # type: ignore[dict-item]
                "approvedBy": call.approved_by, "requestedAt": to_json(call.requested_at),
                "completedAt": to_json(call.completed_at), "specDigest": call.spec_digest}
        out.setdefault(step.attempt_id, []).append({
            "stepId": step.step_id, "sequenceNumber": step.sequence_number,
            "type": step.type.value, "status": step.status.value, "title": step.title,
            "startedAt": to_json(step.started_at), "endedAt": to_json(step.ended_at),
            "failureCode": step.failure_code, "attributes": dict(step.attributes),
            "changedFiles": [change.to_json() for change in step.changed_files], "artifacts": [],
            "toolCall": call_document})
    return out


def test_step_documents_equal_the_records_documents(storage: Storage, repo: Path,
                                                   tmp_path: Path) -> None:
    store = storage
    settings = config.defaults()
    task = submit_task(store, settings, TaskRequest(repository=str(repo), task_type="custom",
                                                    instruction="t"), cwd=tmp_path)
    run = create_run(store, settings, task.task_id, agent=AgentSpec(AgentKind.NOOP))
    lease = lease_run(store, worker_id="t", ttl_seconds=600, run_id=run.run_id)
    assert lease is not None
    ledger = Ledger(store, lease, spec_digest=run.spec_digest)
    results = [
        ToolResult(outcome=ToolOutcome.OK, output="ok", exit_code=0, output_bytes=2),
        ToolResult(outcome=ToolOutcome.TIMED_OUT, error="timed out after 0.5 s", truncated=True),
        ToolResult.denied(ToolDecision.DENIED_BY_POLICY, "rm is denied"),
        None,
    ]
    for index, result in enumerate(results):
        denied = result is not None and result.outcome is ToolOutcome.DENIED
        ledger.finished_call(CallRequest(
            tool="shell.run", arguments_json=json.dumps({"command": f"c{index} ünï"}),
            decision=result.decision if result is not None else ToolDecision.ALLOWED,
            matched_rule="rule", denial_reason="rm is denied" if denied else None,
            requested_at=utcnow()), result,
            attributes={"changedFiles": [{"path": "a.py", "changeType": "MODIFIED"}], "n": index})
    ledger.flush()
    with store.reads() as views:
        expected = record_documents(views, run.run_id)
        assert sum(len(steps) for steps in expected.values()) == len(results)
        tree = run_view(views, views.run(run.run_id), tree=True).attempts
    assert tree is not None
    assert {attempt.attempt.attempt_id: step_documents(attempt, artifact_document)
            for attempt in tree} == expected


@pytest.mark.parametrize("stored", [
    {"outcome": "ok"},
    {"outcome": "failed", "decision": "ALLOWED", "output": "x", "exitCode": 1, "truncated": True,
     "outputBytes": 1, "durationMs": 5, "error": "exit 1"},
    {"outcome": "denied", "decision": "DENIED_BY_POLICY", "error": "denied (DENIED_BY_POLICY)"},
])
def test_tool_result_document_is_the_records_document(stored: dict[str, object]) -> None:
    result = from_json(ToolResult, stored)
    assert json_columns.tool_result_document(stored) == {"ok": result.ok, **to_json(result)}  # type: ignore[dict-item]


def test_times_in_another_form_are_normalised_like_the_records() -> None:
    moment = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    canonical = to_json(moment)
    assert _time(str(canonical)) == canonical
    assert _time(moment.isoformat()) == canonical
    assert _time(moment.astimezone(timezone(timedelta(hours=2))).isoformat()) == canonical
    assert _time(None) is None


@pytest.mark.parametrize("result", [
    ToolResult(outcome=ToolOutcome.OK, output="ok ünï\n", exit_code=0, output_bytes=2),
    ToolResult(outcome=ToolOutcome.TIMED_OUT, error="timed out after 0.5 s", truncated=True,
               duration_ms=500),
    ToolResult.denied(ToolDecision.DENIED_BY_COMMAND_GUARD, "rm"),
])
def test_tool_result_json_is_the_generic_walk(result: ToolResult) -> None:
    assert json_columns.tool_result_json(result) == to_json(result)
    assert list(json_columns.tool_result_json(result)) == list(to_json(result))  # type: ignore[call-overload]


@pytest.mark.parametrize("result", [
    ToolResult(outcome=ToolOutcome.OK, output="ok ünï\n\"quoted\" \\ \x00\x1f\u2028 🦀",
               exit_code=0, output_bytes=2),
    ToolResult(outcome=ToolOutcome.FAILED, output="", exit_code=-9, output_bytes=12345678901,
               duration_ms=7, error="é\terror"),
    ToolResult(outcome=ToolOutcome.TIMED_OUT, error="timed out after 0.5 s", truncated=True,
               duration_ms=500),
    ToolResult.denied(ToolDecision.DENIED_BY_COMMAND_GUARD, "rm"),
    ToolResult(outcome=ToolOutcome.OK, output="a lone \ud800 surrogate", exit_code=2**70),
])
def test_tool_result_text_is_the_encoded_document(result: ToolResult) -> None:
    """The stored column spelt out is byte for byte what the encoder makes of the document."""
    assert json_columns.tool_result_text(result) == dump_plain(json_columns.tool_result_json(result))
