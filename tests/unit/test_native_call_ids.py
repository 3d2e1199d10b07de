"""A native call's name in its hook's input: its PostToolUse closes the call (and ends the
jail) its PreToolUse opened."""

from __future__ import annotations

from agentctl.domain.native_call_ids import call_key


def test_a_call_is_keyed_by_its_id_or_else_by_its_tool_and_input() -> None:
    assert call_key({"tool_use_id": "call_0_0", "tool_name": "Bash"}) == "call_0_0"
    before = {"tool_name": "bash", "tool_input": {"command": "ls", "mode": "sync"}}
    after = {"tool_name": "bash", "tool_input": {"mode": "sync", "command": "ls"},
             "tool_response": "a b"}
    assert call_key(before) == call_key(after) != call_key({**before, "tool_name": "view"})

