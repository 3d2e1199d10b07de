"""agentctl's hook speaks Gemini CLI's BeforeTool format and fails closed where Gemini fails
open: a hook that crashes (any exit but 0 and 2) or times out is "allow" to Gemini, so every
failure of agentctl's hook is a denial both ways (exit 2, and its JSON when it has one). The
last test runs the real CLI with agentctl's hook and no attempt behind it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentctl.domain.agent import NativeAgentSettings
from agentctl.execution.agents import AttemptIdentity
from agentctl.execution.agents.channel import hook_command
from agentctl.execution.agents.gemini import settings_json
from tests.agents.fake_gemini import function_responses, gemini_server
from tests.agents.fake_models import Call, Script, Text
from tests.agents.test_hook import Attempt, client, hook, native_binary

__all__ = ["client", "native_binary"]  # fixtures: each test runs both hooks

BEFORE = {"session_id": "s", "hook_event_name": "BeforeTool", "cwd": "/w",
          "tool_name": "run_shell_command", "tool_input": {"command": "echo hi",
                                                           "description": "say hi"}}


def ask(attempt: Attempt, event: str, payload: dict[str, object] = BEFORE,
        ) -> subprocess.CompletedProcess[str]:
    return hook(json.dumps(payload), "gemini", "--socket", str(attempt.server.path),
                "--attempt", "attempt_A", "--key", "key_hook", "--event", event)


@pytest.fixture
def attempt(tmp_path: Path):  # type: ignore[no-untyped-def]
    live = Attempt(tmp_path)
    yield live
    live.close()


def test_a_denial_is_gemini_json_and_exit_2(attempt: Attempt, client: str) -> None:
    attempt.answer = {"decision": "deny", "reason": "denied (rule: deny: curl *)"}
    result = ask(attempt, "PreToolUse")
    assert result.returncode == 2
    assert json.loads(result.stdout) == {"decision": "deny",
                                         "reason": "denied (rule: deny: curl *)"}
    assert attempt.reached[0]["event"] == "PreToolUse"
    assert attempt.reached[0]["input"] == BEFORE


def test_an_allowed_call_is_allowed_and_a_replaced_input_is_the_tool_input(
        attempt: Attempt, client: str) -> None:
    assert (ask(attempt, "PreToolUse").returncode, json.loads(ask(attempt, "PreToolUse").stdout)) \
        == (0, {"decision": "allow"})
    attempt.answer = {"decision": "allow", "reason": "ok", "updatedInput": json.dumps(
        {"command": "stub TOKEN", "description": "say hi"})}
    result = ask(attempt, "PreToolUse")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"decision": "allow", "hookSpecificOutput": {
        "hookEventName": "BeforeTool",
        "tool_input": {"command": "stub TOKEN", "description": "say hi"}}}


@pytest.mark.parametrize("event", ["PostToolUse", "SessionStart"])
def test_a_result_or_the_session_start_is_acknowledged_silently(attempt: Attempt, client: str,
                                                                event: str) -> None:
    attempt.answer = {"ok": True}
    result = ask(attempt, event, {**BEFORE, "tool_response": {"llmContent": "hi"}})
    assert result.returncode == 0 and result.stdout == "", result.stderr


@pytest.mark.parametrize("answer", [{"decision": "maybe"}, {"refused": True, "reason": "no"},
                                    {"decision": "allow", "updatedInput": "[1]"}])
def test_an_answer_it_cannot_read_denies_with_exit_2(attempt: Attempt, client: str,
                                                     answer: dict[str, object]) -> None:
    attempt.answer = answer
    result = ask(attempt, "PreToolUse")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("agentctl: denied:")


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "native"])
def test_gemini_cli_denies_a_call_when_agentctls_hook_fails(
        gemini_cli: Path, tmp_path: Path, compiled: bool,
        request: pytest.FixtureRequest) -> None:
    """The real CLI, agentctl's own settings and hook (either one), no attempt behind the hook
    (the run is gone): the shell call is blocked and never runs."""
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    (home / ".gemini").mkdir(parents=True)
    workspace.mkdir()
    marker = workspace / "marker.txt"
    binary = request.getfixturevalue("native_binary") if compiled else None
    command = hook_command("gemini", AttemptIdentity(tmp_path / "gone", "attempt_gone"), "k",
                           binary)
    assert ("launch.py" in command) is not compiled
    (home / ".gemini" / "settings.json").write_text(
        settings_json(NativeAgentSettings(command=str(gemini_cli), max_turns=5), command))
    server = gemini_server()
    try:
        server.script = Script([[Call("run_shell_command", {"command": f"touch {marker}"})],
                                [Text("done")]])
        done = subprocess.run(
            [str(gemini_cli), "-p", "touch the marker", "--output-format", "stream-json",
             "--approval-mode", "yolo", "--skip-trust", "-m", "gemini-2.5-pro"],
            cwd=workspace, capture_output=True, text=True, timeout=120,
            env={"PATH": os.environ["PATH"], "HOME": str(home), "GEMINI_API_KEY": "placeholder",
                 "GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_CLI_TRUST_WORKSPACE": "false"})
        requests = list(server.script.requests)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert len(requests) == 2 and not marker.exists()
    told = " ".join(function_responses(requests[-1]))
    assert "cannot reach the attempt" in told, told
