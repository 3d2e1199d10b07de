"""The gateway's meter and price table: usage read out of each wire format as it streams."""

from __future__ import annotations

import json

import pytest

from agentctl.domain.model_prices import DEFAULT, Price, PriceError, parse_prices, price_of
from agentctl.execution.gateway.meter import Meter


def feed(meter: Meter, *events: dict[str, object]) -> Meter:
    for event in events:
        meter.event(json.dumps(event).encode())
    return meter


def test_anthropic_stream_estimates_output_until_the_vendor_reports_it() -> None:
    meter = feed(Meter(), {"type": "message_start", "message": {
        "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "cache_read_input_tokens": 5,
                                                "output_tokens": 1}}},
                 {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x" * 40}})
    assert (meter.model, meter.input_tokens, meter.output_tokens) == ("claude-sonnet-4-5", 15, 10)
    feed(meter, {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                 "usage": {"output_tokens": 7}})
    assert (meter.output_tokens, meter.stop_reason, "".join(meter.texts)) == (7, "end_turn",
                                                                              "x" * 40)


def test_openai_responses_and_chat_completions_usage() -> None:
    responses = feed(Meter(), {"type": "response.output_text.delta", "delta": "abcd" * 5},
                     {"type": "response.completed", "response": {
                         "model": "gpt-5", "status": "completed",
                         "usage": {"input_tokens": 30, "output_tokens": 4}}})
    assert (responses.model, responses.tokens, responses.stop_reason) == ("gpt-5", 34,
                                                                          "completed")
    chat = feed(Meter(), {"model": "m", "choices": [{"delta": {"content": "hey"},
                                                     "finish_reason": None}]},
                {"model": "m", "choices": [{"delta": {}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 9, "completion_tokens": 2}})
    chat.event(b"[DONE]")
    assert (chat.tokens, chat.stop_reason, chat.texts) == (11, "stop", ["hey"])
    whole = Meter()
    whole.body(json.dumps({"type": "message", "model": "claude-haiku-4-5", "stop_reason":
                           "max_tokens", "usage": {"input_tokens": 3, "output_tokens": 2},
                           "content": [{"type": "text", "text": "hi"}]}).encode())
    assert (whole.tokens, whole.stop_reason, whole.texts) == (5, "max_tokens", ["hi"])


def test_prices_by_longest_prefix_configured_first_and_unknown_models_are_not_free() -> None:
    assert price_of("claude-opus-4-5-20251101") == Price(5.0, 25.0)
    assert price_of("claude-opus-4-1") == Price(15.0, 75.0)
    assert price_of("my-local-model") == DEFAULT
    table = parse_prices(["my-local=0/0", "claude-sonnet-4=1/2"])
    assert price_of("my-local-model", table).cost(10**6, 10**6) == 0
    assert price_of("claude-sonnet-4-5", table).cost(10**6, 10**6) == 3.0
    with pytest.raises(PriceError, match="MODEL=IN/OUT"):
        parse_prices(["gpt-5=1"])


def test_gemini_stream_usage_is_the_running_total_and_thinking_is_output() -> None:
    meter = feed(Meter(), {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "plan", "thought": True}, {"text": "x" * 40}]}}],
        "modelVersion": "gemini-2.5-pro",
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 1}})
    assert (meter.model, meter.input_tokens, meter.output_tokens) == ("gemini-2.5-pro", 100, 11)
    assert meter.texts == ["x" * 40]  # the thought is not the answer's text
    feed(meter, {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}]},
        "finishReason": "STOP"}], "modelVersion": "gemini-2.5-pro",
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 7,
                          "thoughtsTokenCount": 5, "toolUsePromptTokenCount": 3}})
    assert (meter.input_tokens, meter.output_tokens, meter.stop_reason) == (103, 12, "STOP")


def test_a_whole_gemini_answer_is_metered_from_its_body() -> None:
    meter = Meter()
    meter.body(json.dumps({"candidates": [{"content": {"parts": [{"text": "hi"}]},
                                           "finishReason": "MAX_TOKENS"}],
                           "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 2},
                           "modelVersion": "gemini-2.5-flash"}).encode())
    assert (meter.model, meter.tokens, meter.stop_reason, meter.texts) == (
        "gemini-2.5-flash", 11, "MAX_TOKENS", ["hi"])
