"""A native call's name in its hook's input and in the model requests that give its result
back: the attempt ends a jailed command whose call's result reaches the model."""

from __future__ import annotations

import json

import pytest

from agentctl.domain.native_call_ids import answered_calls, call_key


def test_a_call_is_keyed_by_its_id_or_else_by_its_tool_and_input() -> None:
    assert call_key({"tool_use_id": "call_0_0", "tool_name": "Bash"}) == "call_0_0"
    before = {"tool_name": "bash", "tool_input": {"command": "ls", "mode": "sync"}}
    after = {"tool_name": "bash", "tool_input": {"mode": "sync", "command": "ls"},
             "tool_response": "a b"}
    assert call_key(before) == call_key(after) != call_key({**before, "tool_name": "view"})


def test_the_results_a_request_gives_back_are_named_on_each_wire() -> None:
    responses = {"input": [
        {"type": "function_call", "call_id": "call_1", "name": "exec_command"},
        {"type": "function_call_output", "call_id": "call_1", "output": "Process running"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": "done"},
        {"type": "message", "role": "user", "content": "call_3"}]}
    anthropic = {"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_9"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9",
                                      "content": [{"type": "text", "text": "ran"}]},
                                     {"type": "text", "text": "toolu_8"}]}]}
    chat = {"messages": [{"role": "assistant", "tool_calls": [{"id": "c7"}]},
                         {"role": "tool", "tool_call_id": "c7", "content": "ok"}]}
    assert answered_calls(json.dumps(responses).encode()) == {"call_1": "Process running",
                                                              "call_2": "done"}
    assert answered_calls(json.dumps(anthropic).encode()) == {"toolu_9": "ran"}
    assert answered_calls(json.dumps(chat).encode()) == {"c7": "ok"}


@pytest.mark.parametrize("body", [b"", b"not json", b"[1, 2]", b'{"input": "text"}',
                                  b'{"messages": [{"role": "user", "content": "hi"}]}',
                                  b'{"input": [{"type": "function_call_output"}]}'])
def test_a_body_with_no_tool_result_names_no_call(body: bytes) -> None:
    assert answered_calls(body) == {}
