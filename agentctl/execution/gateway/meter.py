"""Reading usage out of model responses as they stream: Anthropic Messages, OpenAI Responses
and Chat Completions, Gemini generateContent, one SSE event (or one whole JSON body) at a time.

Vendors report output tokens late (Anthropic in `message_delta`, OpenAI at the end), so while a
response streams its output is estimated from the characters streamed so far (4 per token) and
the reported figure wins once it arrives: a budget can be enforced mid-answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

CHARS_PER_TOKEN = 4


@dataclass
class Meter:
    """One response's usage so far."""

    model: str = ""
    input_tokens: int = 0
    reported_output: int = 0
    streamed_chars: int = 0
    stop_reason: str | None = None
    texts: list[str] = field(default_factory=list)  # assistant text, for the step's summary
    final: bool = False  # the vendor reported the response's output tokens: no estimate now
    _item_deltas: bool = False

    @property
    def output_tokens(self) -> int:
        if self.final:
            return self.reported_output
        return max(self.reported_output, -(-self.streamed_chars // CHARS_PER_TOKEN))

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    # --- streamed -----------------------------------------------------------------------
    def event(self, data: bytes) -> None:
        """One SSE `data:` payload."""
        if data.strip() == b"[DONE]":
            return
        try:
            value = json.loads(data)
        except ValueError:
            return
        if isinstance(value, dict):
            self._event(value)

    def _event(self, event: dict[str, object]) -> None:
        kind = str(event.get("type") or "")
        if kind == "message_start":
            message = _dict(event.get("message"))
            self.model = str(message.get("model") or self.model)
            self._anthropic_usage(_dict(message.get("usage")))
        elif kind == "content_block_delta":
            delta = _dict(event.get("delta"))
            for key in ("text", "partial_json", "thinking"):
                piece = delta.get(key)
                if isinstance(piece, str):
                    self.streamed_chars += len(piece)
                    if key == "text":
                        self.texts.append(piece)
        elif kind == "message_delta":
            self._anthropic_usage(_dict(event.get("usage")))
            self.final = "output_tokens" in _dict(event.get("usage"))
            reason = _dict(event.get("delta")).get("stop_reason")
            if isinstance(reason, str):
                self.stop_reason = reason
        elif kind.startswith("response."):
            self._responses_event(kind, event)
        elif "choices" in event:
            self._chat(event, streamed=True)
        elif "candidates" in event or "usageMetadata" in event:
            self._gemini(event, streamed=True)

    def _responses_event(self, kind: str, event: dict[str, object]) -> None:
        if kind.endswith(".delta") and isinstance(event.get("delta"), str):
            piece = str(event["delta"])
            self.streamed_chars += len(piece)
            self._item_deltas = True
            if kind == "response.output_text.delta":
                self.texts.append(piece)
        elif kind == "response.output_item.done" and not self._item_deltas:
            item = _dict(event.get("item"))
            for key in ("arguments", "input"):
                if isinstance(item.get(key), str):
                    self.streamed_chars += len(str(item[key]))
            for part in _list(item.get("content")):
                text = _dict(part).get("text")
                if isinstance(text, str):
                    self.streamed_chars += len(text)
                    self.texts.append(text)
        response = _dict(event.get("response"))
        if response:
            self._responses_body(response)

    # --- whole bodies -----------------------------------------------------------------------
    def body(self, data: bytes) -> None:
        """A non-streamed response body."""
        try:
            value = json.loads(data)
        except ValueError:
            return
        if not isinstance(value, dict):
            return
        if value.get("type") == "message":  # Anthropic Messages
            self.model = str(value.get("model") or "")
            self._anthropic_usage(_dict(value.get("usage")))
            self.final = True
            self.stop_reason = str(value.get("stop_reason") or "") or None
            for block in _list(value.get("content")):
                text = _dict(block).get("text")
                if isinstance(text, str):
                    self.texts.append(text)
        elif value.get("object") == "response":
            self._responses_body(value)
        elif "choices" in value:
            self._chat(value, streamed=False)
        elif "candidates" in value or "usageMetadata" in value:
            self._gemini(value, streamed=False)
            self.final = self.final or "usageMetadata" in value

    def _anthropic_usage(self, usage: dict[str, object]) -> None:
        given = sum(_int(usage.get(key)) for key in (
            "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        self.input_tokens = max(self.input_tokens, given)
        self.reported_output = max(self.reported_output, _int(usage.get("output_tokens")))

    def _responses_body(self, response: dict[str, object]) -> None:
        self.model = str(response.get("model") or self.model)
        usage = _dict(response.get("usage"))
        if usage:
            self.input_tokens = max(self.input_tokens, _int(usage.get("input_tokens")))
            self.reported_output = max(self.reported_output, _int(usage.get("output_tokens")))
            self.final = "output_tokens" in usage
        status = response.get("status")
        if status in ("completed", "incomplete", "failed", "cancelled"):
            reason = _dict(response.get("incomplete_details")).get("reason")
            self.stop_reason = str(reason or status)

    def _chat(self, value: dict[str, object], *, streamed: bool) -> None:
        self.model = str(value.get("model") or self.model)
        usage = _dict(value.get("usage"))
        if usage:
            self.input_tokens = max(self.input_tokens, _int(usage.get("prompt_tokens")))
            self.reported_output = max(self.reported_output, _int(usage.get("completion_tokens")))
            self.final = "completion_tokens" in usage
        for entry in _list(value.get("choices")):
            choice = _dict(entry)
            message = _dict(choice.get("delta" if streamed else "message"))
            content = message.get("content")
            if isinstance(content, str):
                self.texts.append(content)
                if streamed:
                    self.streamed_chars += len(content)
            for call in _list(message.get("tool_calls")):
                arguments = _dict(_dict(call).get("function")).get("arguments")
                if isinstance(arguments, str) and streamed:
                    self.streamed_chars += len(arguments)
            if isinstance(choice.get("finish_reason"), str):
                self.stop_reason = str(choice["finish_reason"])


    def _gemini(self, value: dict[str, object], *, streamed: bool) -> None:
        """A generateContent response (or one streamed chunk of it): its `usageMetadata` is
        the running total so far; thinking is billed as output, tool-use prompts as input."""
        self.model = str(value.get("modelVersion") or self.model)
        usage = _dict(value.get("usageMetadata"))
        if usage:
            self.input_tokens = max(self.input_tokens, _int(usage.get("promptTokenCount"))
                                    + _int(usage.get("toolUsePromptTokenCount")))
            self.reported_output = max(self.reported_output,
                                       _int(usage.get("candidatesTokenCount"))
                                       + _int(usage.get("thoughtsTokenCount")))
        for entry in _list(value.get("candidates")):
            candidate = _dict(entry)
            for part in _list(_dict(candidate.get("content")).get("parts")):
                piece = _dict(part)
                text = piece.get("text")
                if isinstance(text, str):
                    if piece.get("thought") is not True:
                        self.texts.append(text)
                    if streamed:
                        self.streamed_chars += len(text)
                call = piece.get("functionCall")
                if isinstance(call, dict) and streamed:
                    self.streamed_chars += len(json.dumps(call.get("args"), default=str))
            reason = candidate.get("finishReason")
            if isinstance(reason, str):
                self.stop_reason = reason
                self.final = self.final or "candidatesTokenCount" in usage


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
