"""Claude Code's model requests go through agentctl's gateway: the real CLI, a real repository,
the installed `agentctl`; only Anthropic's API is the scripted fake of `fake_models`, and what
it receives is what these tests assert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench, claude_bench, claude_config
from tests.agents.fake_models import Call, FakeModel, Script, Text, tool_results
from tests.agents.key_search import search_command

KEY = "sk-ant-real-key-4b1d9e7c0a"


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], claude_cli: Path, anthropic: FakeModel,
          run_agentctl: Any) -> AgentBench:
    return claude_bench(payments, claude_cli, anthropic, run_agentctl, key=KEY)


@pytest.fixture(scope="module")
def searched(bench: AgentBench, anthropic: FakeModel) -> dict[str, Any]:
    anthropic.script = Script([
        [Text("Looking for the key."),
         Call("Bash", {"command": search_command(KEY), "description": "search"})],
        [Text("done")]])
    run = bench.start(bench.submit("Look for the API key"), "claude")
    return {"run": run, "requests": list(anthropic.script.requests),
            "headers": list(anthropic.script.headers)}


def test_the_real_key_arrives_upstream_and_the_cli_sent_a_placeholder(
        searched: dict[str, Any]) -> None:
    headers = searched["headers"]
    assert headers and all(h.get("x-api-key") == KEY for h in headers), headers
    assert all("authorization" not in h for h in headers)


def test_an_agent_searching_its_environment_and_files_finds_no_key(
        bench: AgentBench, searched: dict[str, Any]) -> None:
    call = bench.calls(searched["run"]["runId"])[0]
    assert call["toolName"] == "claude.Bash" and call["decision"] == "ALLOWED", call
    told = " ".join(tool_results(searched["requests"][-1]))
    # a shell command runs in its own jail, whose environment holds no model key at all (not
    # even the placeholder the CLI was given)
    assert "KEY-HITS [] PLACEHOLDER False" in told, told
    assert int(told.rsplit("FILES", 1)[1].split()[0]) > 10  # and it read files
    assert KEY not in json.dumps(searched["requests"])


def test_each_model_request_is_a_planning_step_with_its_usage_and_a_kept_exchange(
        bench: AgentBench, searched: dict[str, Any]) -> None:
    run_id = searched["run"]["runId"]
    planning = [s for s in bench.steps(run_id) if s["type"] == "MODEL_PLANNING"]
    assert len(planning) == len(searched["requests"])
    first = planning[0]["attributes"]
    assert first["summary"] == "Looking for the key."
    assert first["inputTokens"] == 1200 and first["outputTokens"] == 300  # the fake's usage
    assert first["stopReason"] == "tool_use" and first["model"]
    assert first["costUsd"] > 0 and first["latencyMs"] > 0
    assert first["requestDigest"].startswith("sha256:") and first["responseDigest"] != \
        first["requestDigest"]
    artifacts = bench.json("artifact", "list", run_id)
    kept = [a for a in artifacts if a["name"] == "model-exchange.json"]
    assert len(kept) == len(planning) and {a["visibility"] for a in kept} == {"INTERNAL_ONLY"}
    cost = json.loads(bench.cli("artifact", "show", next(
        a for a in artifacts if a["type"] == "COST_REPORT")["artifactId"]).stdout)
    assert cost["source"] == "gateway" and cost["modelRequests"] == len(planning)
    assert cost["totalTokens"] == 1500 * len(planning) and cost["claimsAgree"] is True


LONG = " ".join(f"word{n}" for n in range(3000))


@pytest.fixture(scope="module")
def long_answer(bench: AgentBench, anthropic: FakeModel, claude_cli: Path) -> dict[str, Any]:
    bench.config(claude_config(claude_cli, "max_tokens = 300\n"))
    try:
        anthropic.script = Script([[Text(LONG)]], usage=(100, 4000), chunk=40)
        run = bench.start(bench.submit("Write a long answer"), "claude")
    finally:
        bench.config(claude_config(claude_cli))
    return {"run": run, "requests": list(anthropic.script.requests)}


def test_a_token_budget_ends_a_streaming_answer_within_one_event(
        bench: AgentBench, long_answer: dict[str, Any]) -> None:
    run_id = long_answer["run"]["runId"]
    planning = [s["attributes"] for s in bench.steps(run_id) if s["type"] == "MODEL_PLANNING"]
    stopped = [p for p in planning if p.get("decision") == "DENIED_BY_BUDGET"]
    assert len(stopped) == 1 and stopped[0]["matchedRule"] == "budget: max_tokens 300"
    spent = stopped[0]["inputTokens"] + stopped[0]["outputTokens"]
    assert 300 <= spent <= 300 + 10  # one event: 40 characters, 10 tokens
    assert stopped[0]["outputTokens"] < 4000  # the answer did not run to its end
    verdict = bench.json("verdict", "show", run_id)
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert "max_tokens 300" in verdict["reasons"][0] and f"{spent} model tokens" in \
        verdict["reasons"][0], verdict["reasons"]
    assert len(long_answer["requests"]) == 1  # nothing more reached the model


@pytest.fixture(scope="module")
def verified(bench: AgentBench, anthropic: FakeModel, claude_cli: Path) -> dict[str, Any]:
    """The verification command is the key search: the run's other processes lack it too."""
    search = json.dumps(search_command(KEY))
    bench.config(claude_config(claude_cli).replace(
        'commands = ["python3 -m unittest discover -s tests -t ."]', f"commands = [{search}]"))
    try:
        anthropic.script = Script([[Call("Write", {"file_path": "{cwd}/payments/note.py",
                                                   "content": "NOTE = 1\n"})],
                                   [Text("done")]])
        run = bench.start(bench.submit("Add a note"), "claude")
    finally:
        bench.config(claude_config(claude_cli))
    return {"run": run}


def test_verification_of_a_native_agent_run_holds_no_key_either(
        bench: AgentBench, verified: dict[str, Any]) -> None:
    logs = [a for a in bench.json("artifact", "list", verified["run"]["runId"])
            if a["type"] == "COMMAND_LOG" and not a["name"].endswith("-stream.jsonl")]
    assert logs, "the verification command ran"
    text = bench.cli("artifact", "show", logs[0]["artifactId"]).stdout
    assert "KEY-HITS []" in text and "FILES" in text, text
