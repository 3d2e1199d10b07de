"""A bug in agentctl's side of a native agent's hook (a KeyError, a TypeError) is not read as a
denial the agent works around: it leaves the hook handler and ends the attempt with its
traceback. A refusal (agentctl's own error, a malformed request) is still a denial."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from agentctl.domain.agent import AgentKind, AgentSpec
from agentctl.domain.errors import BadInput
from agentctl.execution.agents import AgentSession
from agentctl.execution.agents.codex import CodexAgent
from agentctl.execution.agents.hook_socket import Source
from agentctl.execution.agents.stream import StreamReader, StreamState

CALL = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}


class Raising:
    """The attempt's side of the hooks, broken by `error` on every PreToolUse."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def before(self, agent: str, payload: object) -> Any:
        raise self.error


def _pre_tool_use(tmp_path: Path, error: Exception) -> dict[str, object]:
    session = AgentSession(
        instruction="fix it", workspace=tmp_path, task_file=tmp_path / "task.json",
        tools=None, step=lambda *_: nullcontext(), should_stop=lambda: False)  # type: ignore[arg-type]
    agent = CodexAgent(AgentSpec(AgentKind.CODEX))
    return agent._handle({"event": "PreToolUse", "input": CALL}, Source.HOOK,
                         Raising(error), StreamReader(tmp_path / "stream.jsonl"),  # type: ignore[arg-type]
                         StreamState(), session)


@pytest.mark.parametrize("bug", [KeyError("tool_input"), TypeError("'NoneType' is not iterable")])
def test_a_key_or_type_error_in_the_handler_is_a_bug_not_a_denial(
        tmp_path: Path, bug: Exception) -> None:
    with pytest.raises(type(bug)):
        _pre_tool_use(tmp_path, bug)


def test_agentctls_own_refusal_is_still_a_denial_the_agent_reads(tmp_path: Path) -> None:
    answer = _pre_tool_use(tmp_path, BadInput("no such path"))
    assert answer["decision"] == "deny" and answer["reason"] == "BadInput: no such path"
