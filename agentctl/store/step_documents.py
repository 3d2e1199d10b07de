"""The run tree's step documents (`run show --tree`), built straight from the rows.

A busy run has tens of thousands of steps and tool calls; decoding each into its record and
encoding the record back to JSON doubled the work of the command (issue 9). The documents are
the stored columns under their camelCase names, so this reads only the columns the tree shows,
as plain tuples, and passes the stored text through: times are stored in the very ISO form the
documents show (`rows.iso`), and a tool result's JSON is the document of `ToolResult`. The
records stay the typed path for everything that decides something; this is display only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentctl.domain.clock import to_iso
from agentctl.domain.step import changed_files_of
from agentctl.store.json_columns import tool_result_document

if TYPE_CHECKING:
    from agentctl.store.views import Views

Document = dict[str, Any]

_STEPS = ("SELECT step_id, attempt_id, sequence_number, type, status, title, started_at, "
          "ended_at, failure_code, attributes FROM step WHERE run_id = ? "
          "ORDER BY attempt_id, sequence_number")
_CALLS = ("SELECT step_id, tool_call_id, tool_name, arguments_json, decision, matched_rule, "
          "denial_reason, result, approved_by, requested_at, completed_at, spec_digest "
          "FROM tool_call WHERE run_id = ?")


def step_documents(views: Views, run_id: str, artifacts: Mapping[str, list[Document]],
                   ) -> dict[str, list[Document]]:
    """Each attempt's steps (by attempt id, in order), each with its tool call and the
    documents of the artifacts it produced (`artifacts`, by step id)."""
    calls = {row[0]: _call(row) for row in views.tuples(_CALLS, (run_id,))}
    by_attempt: dict[str, list[Document]] = {}
    for (step_id, attempt_id, number, type_, status, title, started, ended, failure,
         attributes_text) in views.tuples(_STEPS, (run_id,)):
        attributes = _load(attributes_text)
        by_attempt.setdefault(attempt_id, []).append({
            "stepId": step_id, "sequenceNumber": number, "type": type_, "status": status,
            "title": title, "startedAt": _time(started), "endedAt": _time(ended),
            "failureCode": failure, "attributes": attributes,
            "changedFiles": changed_files(attributes), "artifacts": artifacts.get(step_id, []),
            "toolCall": calls.get(step_id),
        })
    return by_attempt


def changed_files(attributes: Mapping[str, object]) -> list[Document]:
    """Which files the step changed (`changedFiles`), as the attempt recorded them."""
    return [entry.to_json() for entry in changed_files_of(attributes)]


def _call(row: tuple[Any, ...]) -> Document:
    (_, call_id, tool, arguments, decision, rule, denial, result, approved_by, requested,
     completed, digest) = row
    return {
        "toolCallId": call_id, "toolName": tool, "argumentsJson": arguments,
        "decision": decision, "matchedRule": rule, "denialReason": denial,
        "result": None if result is None else tool_result_document(json.loads(result)),
        "approvedBy": approved_by, "requestedAt": _time(requested),
        "completedAt": _time(completed), "specDigest": digest,
    }


def _load(text: str) -> dict[str, Any]:
    return {} if text == "{}" else dict(json.loads(text))


def _time(text: str | None) -> str | None:
    """The stored time as the documents show it; the stored form already is (`...123456Z`),
    anything else is normalised through the record's parse."""
    if text is None or (len(text) == 27 and text[-1] == "Z" and text[10] == "T"):
        return text
    from datetime import datetime

    return to_iso(datetime.fromisoformat(text))
