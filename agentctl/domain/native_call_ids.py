"""How one native tool call is named on both sides of the agent CLI: in its hook's input (the
key that pairs a PostToolUse with its PreToolUse) and in the model requests that carry its
result back to the model.

A CLI may give a call back to its model while the call's command still runs (Codex's
`exec_command` past its `yield_time_ms` fires no PostToolUse then): the request that carries
the call's result is the one place that shows it, so the attempt reads the call ids there
(and what the model was told of the call then).

Pure: a hook payload or a request's bytes in, names (and results' texts) out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

# where a request's tool results are, per wire: (its list, the field that marks an item a
# result, the values that do, the field naming its call)
_RESULTS = (("input", "type", ("function_call_output", "custom_tool_call_output"), "call_id"),
            ("messages", "role", ("tool",), "tool_call_id"))  # Responses; Chat Completions


def call_key(payload: Mapping[str, object]) -> str:
    """The call's id as the hook gives it; for a CLI that gives none, its tool and input (the
    same before and after the call)."""
    key = payload.get("tool_use_id") or payload.get("call_id") or payload.get("turn_id")
    if key:
        return str(key)
    return json.dumps([payload.get("tool_name"), payload.get("tool_input")], sort_keys=True,
                      default=str)


def answered_calls(body: bytes) -> dict[str, str]:
    """The tool calls whose results a model request gives the model (OpenAI Responses and Chat
    Completions, Anthropic Messages), by id, each with the text of its result as given; none
    for a body that is not one."""
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(request, dict):
        return {}
    found: dict[str, str] = {}
    for field, marker, kinds, name in _RESULTS:
        for item in _dicts(request.get(field)):
            if item.get(marker) in kinds:
                found[str(item.get(name) or "")] = _text(item.get(
                    "output" if field == "input" else "content"))
    for message in _dicts(request.get("messages")):  # Anthropic: blocks of a user message
        for block in _dicts(message.get("content")):
            if block.get("type") == "tool_result":
                found[str(block.get("tool_use_id") or "")] = _text(block.get("content"))
    found.pop("", None)
    return found


def _text(value: object) -> str:
    """A result's text: a string, or the text parts of a list of content parts."""
    if isinstance(value, str):
        return value
    return "".join(str(part["text"]) for part in _dicts(value) if isinstance(part.get("text"), str))


def _dicts(value: object) -> list[dict[str, object]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
