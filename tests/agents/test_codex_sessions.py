"""Codex runs code only through calls its PreToolUse hook sees: the real CLI (the model faked at
its API, as in test_codex) is asked for an interactive `exec_command` (`tty: true`) and then for
`write_stdin` into that session, which fires no hook in Codex 0.171.0. agentctl's config.toml
switches interactive sessions off, so the typed code never runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench
from tests.agents.fake_models import Call, FakeModel, Script, Text, function_outputs
from tests.agents.test_codex import codex_config

TYPED = "print('RAN', 6 * 7)\n"  # the echo shows the line; only running it prints RAN 42
READER = "python3 -c 'import sys; exec(sys.stdin.readline())'"  # runs what it is sent
SCRIPT = [
    [Call("exec_command", {"cmd": "python3 -i", "tty": True, "yield_time_ms": 1000})],
    [Call("exec_command", {"cmd": READER, "yield_time_ms": 1000})],
    # into the last session Codex reported open (the fake model reads its id from the outputs)
    [Call("write_stdin", {"session_id": "{session}", "chars": TYPED, "yield_time_ms": 1000})],
    [Text("done")],
]


@pytest.fixture(scope="module")
def typed(payments: tuple[Path, Path], codex_cli: Path, openai: FakeModel,
          run_agentctl: Any) -> dict[str, Any]:
    root, repository = payments
    bench = AgentBench(root, repository, run_agentctl,
                       {"FAKE_API_KEY": "sk-fake-openai-0123456789"})
    bench.config(codex_config(codex_cli, openai.url))
    openai.script = Script(SCRIPT)
    run = bench.start(bench.submit("Start python and type into it"), "codex")
    return {"bench": bench, "run": run, "requests": list(openai.script.requests)}


def test_code_typed_into_an_exec_session_never_runs(typed: dict[str, Any]) -> None:
    bench, run_id = typed["bench"], typed["run"]["runId"]
    told = function_outputs(typed["requests"][-1])
    assert not [said for said in told if "RAN 42" in said], told
    assert len(told) == 3, told  # the model got an answer to each of its three calls
    assert "TTY execution is disabled" in told[0], told[0]
    assert all(call["toolName"] == "codex.Bash" for call in bench.calls(run_id))
