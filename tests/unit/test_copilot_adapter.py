"""Copilot CLI's hook input and answer in agentctl's terms (the adapter's pure parts)."""

from __future__ import annotations

import json

from agentctl.execution.agents.copilot import (
    HOOK_TIMEOUT_SECONDS,
    hook_file,
    tool_input,
    tool_response,
    waiting_to_the_end,
)
from agentctl.hooks import hook


def test_tool_args_given_as_an_object_or_text_become_an_object() -> None:
    assert tool_input({"path": "/w/a"}) == {"path": "/w/a"}
    assert tool_input('{"command": "ls"}') == {"command": "ls"}
    patch = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"
    assert tool_input(patch) == {"input": patch}  # apply_patch's patch as it is
    assert tool_input("[1]") == {"input": "[1]"} and tool_input(None) == {}


def test_a_shell_result_gives_its_exit_code_and_a_failed_result_its_error() -> None:
    ran, failed = tool_response({"resultType": "success",
                                 "textResultForLlm": "out\n<shellId: 3 completed with exit "
                                                     "code 7>"})
    assert (ran, failed) == ({"output": "out", "exit_code": 7}, False)
    refused, failed = tool_response({"resultType": "failure", "textResultForLlm": "no such"})
    assert failed and refused == {"output": "no such", "error": "no such"}


def test_each_event_runs_the_hook_with_its_name_and_a_timeout_far_above_its_own() -> None:
    hooks = json.loads(hook_file("/py hook.py copilot --key K || exit 2"))
    assert hooks["version"] == 1
    assert hooks["hooks"]["preToolUse"] == [{
        "type": "command", "bash": "/py hook.py copilot --key K --event PreToolUse || exit 2",
        "timeoutSec": HOOK_TIMEOUT_SECONDS}]
    assert set(hooks["hooks"]) == {"sessionStart", "preToolUse", "postToolUse",
                                   "postToolUseFailure"}
    assert HOOK_TIMEOUT_SECONDS > hook.CONNECT_SECONDS + hook.REPLY_SECONDS  # the hook's own


def test_a_routed_shell_call_waits_for_its_command_as_long_as_the_jail_may_run() -> None:
    """Whatever `initial_wait` the model asked (or none), the call is not returned while its
    command runs and the attempt goes on; a longer wait the model asked is kept."""
    stub = {"command": "if [ -p x ]; then ...; fi", "description": "d"}
    assert waiting_to_the_end({**stub, "initial_wait": 2}, 1799.2) == {**stub,
                                                                      "initial_wait": 1800}
    assert waiting_to_the_end(stub, 0.0) == {**stub, "initial_wait": 1}
    assert waiting_to_the_end({**stub, "initial_wait": 5000}, 60.0)["initial_wait"] == 5000
    assert waiting_to_the_end({**stub, "initial_wait": True}, 60.0)["initial_wait"] == 60
