"""The run tree's step documents (`run show --tree`), shaped from the stored columns the read
model carries (`services.queries.read_models.StepView`).

The documents are the stored columns under their camelCase names and pass the stored text
through: times are stored in the very ISO form the documents show (`rows.iso`), and a tool
result's JSON is the document of `ToolResult`. Display only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agentctl.domain.artifact import Artifact
from agentctl.domain.clock import to_iso
from agentctl.domain.step import ChangedFile
from agentctl.services.queries.read_models import AttemptView, ForbiddenEdits, StepView
from agentctl.services.unit_of_work import CallRow
from agentctl.store.json_columns import tool_result_document

Document = dict[str, Any]


def step_documents(attempt: AttemptView, artifact_document: Callable[[Artifact], Document],
                   forbidden: ForbiddenEdits | None = None) -> list[Document]:
    """The attempt's steps in order, each with its tool call and the documents of the
    artifacts it produced; a changed file the patch boundary forbade carries its rule
    (`forbidden`), on the step that changed it."""
    def changed(change: ChangedFile) -> Document:
        document: Document = change.to_json()
        rule = forbidden.rule(attempt.attempt.attempt_id, change) if forbidden else None
        if rule is not None:
            document["forbidden"] = rule
        return document

    return [_step(step, artifact_document, changed) for step in attempt.steps]


def _step(step: StepView, artifact_document: Callable[[Artifact], Document],
          changed: Callable[[ChangedFile], Document]) -> Document:
    row = step.row
    return {
        "stepId": row.step_id, "sequenceNumber": row.sequence_number, "type": row.type,
        "status": row.status, "title": row.title, "startedAt": _time(row.started_at),
        "endedAt": _time(row.ended_at), "failureCode": row.failure_code,
        "attributes": step.attributes,
        "changedFiles": [changed(change) for change in step.changed_files],
        "artifacts": [artifact_document(a) for a in step.artifacts],
        "toolCall": None if step.call is None else _call(step.call),
    }


def _call(row: CallRow) -> Document:
    return {
        "toolCallId": row.tool_call_id, "toolName": row.tool_name,
        "argumentsJson": row.arguments_json, "decision": row.decision,
        "matchedRule": row.matched_rule, "denialReason": row.denial_reason,
        "result": None if row.result is None else tool_result_document(json.loads(row.result)),
        "approvedBy": row.approved_by, "requestedAt": _time(row.requested_at),
        "completedAt": _time(row.completed_at), "specDigest": row.spec_digest,
    }


def _time(text: str | None) -> str | None:
    """The stored time as the documents show it; the stored form already is (`...123456Z`),
    anything else is normalised through the record's parse."""
    if text is None or (len(text) == 27 and text[-1] == "Z" and text[10] == "T"):
        return text

    return to_iso(datetime.fromisoformat(text))
