"""The Gemini API as the scripted fake (`fake_models.FakeModel`) speaks it: `generateContent`
and `streamGenerateContent?alt=sse` under `/v1beta/models/MODEL:`, each scripted turn's text
and function calls as one candidate, with `usageMetadata` (cumulative, as Gemini reports it:
the last chunk carries the totals). A turn is picked by counting the model's turns already in
the request's `contents` (Gemini CLI resends the whole history)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from tests.agents.fake_models import Call, FakeModel, Script, Text, _filled

_WORKSPACE = re.compile(r"Workspace Directories:\*\*\\n\s+- (/[^\s\\\"]+)")


def gemini_turn_number(body: dict[str, Any]) -> int:
    return sum(1 for content in body.get("contents", []) if content.get("role") == "model")


def gemini_workspace(body: dict[str, Any]) -> str:
    """The workspace as Gemini CLI's session context names it: scripted paths say `{cwd}`."""
    found = _WORKSPACE.search(json.dumps(body.get("contents", [])[:1]))
    return found.group(1) if found else ""


def render_gemini(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    number = gemini_turn_number(body)
    cwd = gemini_workspace(body)
    parts: list[dict[str, Any]] = []
    for index, block in enumerate(script.turn(number)):
        if isinstance(block, Text):
            parts.append({"text": block.text})
        else:
            parts.append({"functionCall": {"name": block.name, "args": _filled(block.input, cwd),
                                           "id": f"call_{number}_{index}"}})
    tokens_in, tokens_out = script.usage
    model = "gemini-2.5-pro"
    if not script.paths or ":streamGenerateContent" not in script.paths[-1]:
        yield json.dumps(_chunk(parts, model, tokens_in, tokens_out, "STOP")).encode()
        return
    texts = [part for part in parts if "text" in part]
    calls = [part for part in parts if "functionCall" in part]
    size = script.chunk or max((len(part["text"]) for part in texts), default=1) or 1
    pieces = [{"text": part["text"][start:start + size]}
              for part in texts for start in range(0, len(part["text"]), size)]
    last = pieces.pop() if pieces else None
    for piece in pieces:  # text as it streams, usage so far
        yield _sse(_chunk([piece], model, tokens_in, 1, None))
    final = ([last] if last else []) + calls
    yield _sse(_chunk(final or [{"text": ""}], model, tokens_in, tokens_out, "STOP"))


def _chunk(parts: list[dict[str, Any]], model: str, tokens_in: int, tokens_out: int,
           finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": model,
            "usageMetadata": {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out,
                              "totalTokenCount": tokens_in + tokens_out}}


def _sse(data: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(data)}\r\n\r\n".encode()


def gemini_server() -> FakeModel:
    return FakeModel(render_gemini, scripted=("/v1beta/models/",))


def function_responses(body: dict[str, Any]) -> list[str]:
    """What each function call answered, as the CLI told the model."""
    out: list[str] = []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                out.append(json.dumps(response.get("response"), ensure_ascii=False))
    return out


__all__ = ["Call", "Text", "function_responses", "gemini_server"]
