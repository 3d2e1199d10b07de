"""`agentctl mcp serve`: agentctl's guarded tools over MCP, answered through the real MCP Python
client and through Claude Code's `--mcp-config`; every call a ToolCall of the run, a denial
`isError` with {decision, matchedRule, toolCallId}."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench, claude_config
from tests.agents.fake_models import Call, FakeModel, Script, Text, tool_results

CLIENT = Path(__file__).with_name("mcp_client.py")
ALLOW = ["python3 *", f"{sys.executable} *", "sleep *", "true", "echo *"]


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], claude_cli: Path, anthropic: FakeModel,
          run_agentctl: Any) -> AgentBench:
    root, repository = payments
    bench = AgentBench(root, repository, run_agentctl, {
        "ANTHROPIC_BASE_URL": anthropic.url, "ANTHROPIC_API_KEY": "sk-ant-fake-key-0123456789",
        "MCP_CONNECTION_NONBLOCKING": "0", "MCP_CONNECT_TIMEOUT_MS": "60000"})
    config = claude_config(claude_cli).replace("max_turns = 30\n", "max_turns = 30\nmcp = true\n")
    config = config.replace(
        'passthrough = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]',
        'passthrough = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "MCP_CONNECTION_NONBLOCKING", '
        '"MCP_CONNECT_TIMEOUT_MS"]')
    # the client script lives with the tests, which the sandbox hides: bound back read-only
    bench.config(config + f"\n[tools.commands]\nallow = {json.dumps(ALLOW)}\n"
                 f"\n[sandbox]\nread_only = {json.dumps([str(CLIENT.parent)])}\n")
    return bench


@pytest.fixture(scope="module")
def client_run(bench: AgentBench, anthropic: FakeModel) -> dict[str, Any]:
    """Unsandboxed: a sandboxed Bash call runs in a jail without the agent's home, where the
    MCP server's command line (and its key) cannot be read (test_forged_channel)."""
    anthropic.script = Script([
        [Call("Bash", {"command": f"{sys.executable} {CLIENT}", "description": "mcp client"})],
        [Text("done")]])
    run = bench.start(bench.submit("Write a note over MCP"), "claude", "--no-sandbox")
    return {"run": run}


def test_the_real_mcp_client_gets_guarded_tools_and_structured_denials(
        bench: AgentBench, client_run: dict[str, Any]) -> None:
    run_id = client_run["run"]["runId"]
    calls = bench.calls(run_id)
    bash = next(c for c in calls if c["toolName"] == "claude.Bash")
    answers = json.loads(bash["result"]["output"].split("MCP-ANSWERS ", 1)[1].splitlines()[0])
    assert answers["tools"] == ["fs_delete", "fs_read", "fs_rename", "fs_replace", "fs_write",
                                "patch_apply", "shell_run"]
    assert answers["allowed"]["isError"] is False
    denied = answers["forbidden"]
    assert denied["isError"] is True
    assert denied["structured"]["decision"] == "DENIED_BY_POLICY"
    assert denied["structured"]["matchedRule"] == "forbidden: .github/**"
    recorded = {c["toolCallId"]: c for c in calls}
    assert recorded[denied["structured"]["toolCallId"]]["toolName"] == "fs.write"
    assert recorded[denied["structured"]["toolCallId"]]["decision"] == "DENIED_BY_POLICY"
    written = recorded[answers["allowed"]["structured"]["toolCallId"]]
    assert written["decision"] == "ALLOWED" and written["result"]["ok"]


@pytest.fixture(scope="module")
def claude_mcp_run(bench: AgentBench, anthropic: FakeModel) -> dict[str, Any]:
    anthropic.script = Script([
        [Call("mcp__agentctl__fs_write", {"path": "payments/notes.md", "content": "# notes\n"})],
        [Call("mcp__agentctl__fs_write", {"path": ".github/workflows/x.yml", "content": "x\n"})],
        [Text("done")]])
    run = bench.start(bench.submit("Write notes with agentctl's tools"), "claude")
    return {"run": run, "requests": list(anthropic.script.requests)}


def test_claude_uses_agentctl_tools_through_its_mcp_config(
        bench: AgentBench, claude_mcp_run: dict[str, Any]) -> None:
    run_id = claude_mcp_run["run"]["runId"]
    steps = [s for s in bench.steps(run_id)
             if s["toolCall"] and s["toolCall"]["toolName"] != "net.connect"]
    assert [(s["toolCall"]["toolName"], s["toolCall"]["decision"]) for s in steps] == [
        ("fs.write", "ALLOWED"), ("fs.write", "DENIED_BY_POLICY")]
    assert steps[0]["changedFiles"] == [{"path": "payments/notes.md", "changeType": "ADDED",
                                         "additions": 1, "deletions": 0}]
    told = " ".join(tool_results(claude_mcp_run["requests"][-1]))
    assert "forbidden: .github/**" in told
