"""The tool result's JSON column spelt out, both ways: every tool call stores one and the run
tree shows tens of thousands, so these skip the generic walk of `serialize` (tests hold each to
`to_json` of the record). Every other JSON column is encoded and decoded by the row codecs
(`rows`) from its type.
"""

from __future__ import annotations

import json.encoder
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


_quote = json.encoder.encode_basestring  # a JSON string as the row codecs write it (UTF-8 text)


def tool_result_text(r: ToolResult) -> str:
    """`dump_plain(tool_result_json(r))`, the stored column, spelt out: no dict and no encoder
    walk between the record and its text (a test holds the two together)."""
    return (f'{{"outcome":{_quote(r.outcome.value)},"decision":{_quote(r.decision.value)},'
            f'"output":{_quote(r.output)},"exitCode":{_number(r.exit_code)},'
            f'"truncated":{_number(r.truncated)},"outputBytes":{_number(r.output_bytes)},'
            f'"durationMs":{_number(r.duration_ms)},'
            f'"error":{"null" if r.error is None else _quote(r.error)}}}')


def _number(value: int | None) -> str:
    """An integer (or flag) as `json` writes it."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    return int.__repr__(value)


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
