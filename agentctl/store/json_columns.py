"""The tool result's JSON column, both ways, without the generic walk: every tool call stores
one and the run tree shows tens of thousands, so these skip `serialize` (tests hold each to
`to_json` of the record). Every other JSON column is encoded and decoded by the row codecs
(`rows`) from its type.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from agentctl._speedups.json_text import compiled
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


def tool_result_text(r: ToolResult) -> str:
    """`dump_plain(tool_result_json(r))`, the stored column, by orjson: the document is flat
    (text, integers, flags, nulls), which it writes byte for byte as `json` does, three times
    faster than even a hand-spelt f-string (a test holds the two together)."""
    document = tool_result_json(r)
    try:
        return orjson.dumps(document).decode()
    except TypeError:  # a lone surrogate in the output, an integer past 64 bits: json writes it
        return _compact(document)


_compact = compiled(json.JSONEncoder(separators=(",", ":"), ensure_ascii=False))  # dump_plain's


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
