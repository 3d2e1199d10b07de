"""The tool result's JSON column spelt out, both ways: every tool call stores one and the run
tree shows tens of thousands, so these skip the generic walk of `serialize` (tests hold each to
`to_json` of the record). Every other JSON column is encoded and decoded by the row codecs
(`rows`) from its type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentctl.domain.enums import ToolDecision, ToolOutcome
from agentctl.domain.step import ToolResult


def tool_result_json(r: ToolResult) -> dict[str, Any]:
    """`to_json(r)` spelt out: every tool call stores one, so it skips the generic walk (a unit
    test holds the two together)."""
    return {
        "outcome": r.outcome.value,
        "decision": r.decision.value,
        "output": r.output,
        "exitCode": r.exit_code,
        "truncated": r.truncated,
        "outputBytes": r.output_bytes,
        "durationMs": r.duration_ms,
        "error": r.error,
    }


def tool_result_document(d: Mapping[str, Any]) -> dict[str, Any]:
    """The run tree's document of a stored tool result without the record between: what
    `{"ok": r.ok, **to_json(r)}` gives for `r = from_json(ToolResult, d)`, with the same defaults for keys
    older rows lack (a unit test holds the two together)."""
    outcome = d["outcome"]
    return {
        "ok": outcome == ToolOutcome.OK.value,
        "outcome": outcome,
        "decision": d.get("decision", ToolDecision.ALLOWED.value),
        "output": d.get("output", ""),
        "exitCode": d.get("exitCode"),
        "truncated": bool(d.get("truncated", False)),
        "outputBytes": d.get("outputBytes", 0),
        "durationMs": d.get("durationMs", 0),
        "error": d.get("error"),
    }
