"""The real Claude Code with the compiled hook records every call exactly as with the Python
hook: the same session run both ways (AGENTCTL_NATIVE_HOOK=off, then the default), in the
sandbox, with an allowed read, a forbidden write, a jailed shell call and a denied one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agentctl.execution.agents.hook_binary import NAME, SWITCH
from tests.agents.conftest import AgentBench, claude_bench
from tests.agents.fake_models import Call, FakeModel, Script, Text, tool_results

SESSION: list[list[Text | Call]] = [
    [Call("Read", {"file_path": "{cwd}/.github/workflows/deploy.yml"})],
    [Call("Write", {"file_path": "{cwd}/.github/workflows/deploy.yml", "content": "x: 1\n"})],
    [Call("Bash", {"command": "python3 -c 'print(6 * 7)'", "description": "compute"})],
    [Call("Bash", {"command": "curl -s https://example.com/x", "description": "fetch"})],
    [Text("done")],
]


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], claude_cli: Path, anthropic: FakeModel,
          run_agentctl: Any) -> AgentBench:
    return claude_bench(payments, claude_cli, anthropic, run_agentctl)


def recorded(bench: AgentBench, anthropic: FakeModel, **env: str) -> tuple[list[Any], str]:
    anthropic.script = Script(SESSION)
    task = bench.submit("Read, write, compute, fetch")
    run = bench.cli("run", "start", task, "--agent", "claude", "--json", expect=(0, 1),
                    env=env).json()
    calls = [(c["toolName"], c["decision"], c["matchedRule"], c.get("denialReason"),
              (c["result"] or {}).get("ok"), WORKSPACE.sub("WS", str((c["result"] or {}).get(
                  "output")))) for c in bench.calls(run["runId"])]
    return calls, WORKSPACE.sub("WS", " ".join(tool_results(anthropic.script.requests[-1])))


WORKSPACE = re.compile(r"/tmp/agentctl-ws-\w+")  # each run's own


def test_the_compiled_hook_records_the_calls_exactly_as_the_python_hook(
        bench: AgentBench, anthropic: FakeModel) -> None:
    cache = bench.home / "cache" / "hook"
    by_python, told_python = recorded(bench, anthropic, **{SWITCH: "off"})
    assert not cache.exists()  # switched off: nothing built, the Python hook ran
    by_native, told_native = recorded(bench, anthropic)
    assert len(list(cache.glob(f"*/{NAME}"))) == 1
    assert by_native == by_python
    assert [c[:3] for c in by_native] == [
        ("claude.Read", "ALLOWED", "workspace"),
        ("claude.Write", "DENIED_BY_POLICY", "forbidden: .github/**"),
        ("claude.Bash", "ALLOWED", "allow: python3 *"),
        ("claude.Bash", "DENIED_BY_COMMAND_GUARD", "deny: curl *")]
    assert by_native[2][4:] == (True, "42")
    assert told_native == told_python and "deny: curl *" in told_native
