"""Codex's model requests go through agentctl's gateway: the real CLI, a real repository, the
installed `agentctl`; only the OpenAI Responses API is the scripted fake of `fake_models`, and
what it receives is what these tests assert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench
from tests.agents.fake_models import Call, FakeModel, Fault, Script, Text, function_outputs
from tests.agents.key_search import search_command
from tests.agents.test_codex import codex_config

KEY = "sk-real-openai-9f3e2d1c0b"


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], codex_cli: Path, openai: FakeModel,
          run_agentctl: Any) -> AgentBench:
    root, repository = payments
    bench = AgentBench(root, repository, run_agentctl, {"FAKE_API_KEY": KEY})
    bench.config(codex_config(codex_cli, openai.url))
    return bench


@pytest.fixture(scope="module")
def searched(bench: AgentBench, openai: FakeModel) -> dict[str, Any]:
    openai.script = Script([[Text("Looking for the key."),
                             Call("exec_command", {"cmd": search_command(KEY),
                                                   "yield_time_ms": 120000})],
                            [Text("done")]])
    run = bench.start(bench.submit("Look for the API key"), "codex")
    return {"run": run, "requests": list(openai.script.requests),
            "headers": list(openai.script.headers)}


def test_the_real_key_arrives_upstream_from_codex(searched: dict[str, Any]) -> None:
    headers = searched["headers"]
    assert headers and all(h.get("authorization") == f"Bearer {KEY}" for h in headers), headers


def test_codex_searching_its_environment_and_files_finds_no_key(
        bench: AgentBench, searched: dict[str, Any]) -> None:
    told = " ".join(function_outputs(searched["requests"][-1]))
    assert "KEY-HITS [] PLACEHOLDER False" in told, told  # its own jail: no model key at all
    assert int(told.rsplit("FILES", 1)[1].split()[0]) > 10
    run_id = searched["run"]["runId"]
    planning = [s["attributes"] for s in bench.steps(run_id) if s["type"] == "MODEL_PLANNING"]
    assert len(planning) == len(searched["requests"])
    assert planning[0]["inputTokens"] == 1200 and planning[0]["outputTokens"] == 300
    assert planning[0]["stopReason"] == "completed" and planning[0]["model"] == "fake-model"
    cost = json.loads(bench.cli("artifact", "show", next(
        a for a in bench.json("artifact", "list", run_id)
        if a["type"] == "COST_REPORT")["artifactId"]).stdout)
    assert cost["source"] == "gateway" and cost["claimsAgree"] is True


def test_codex_whose_model_keeps_failing_is_an_infrastructure_failure(
        bench: AgentBench, codex_cli: Path, openai: FakeModel) -> None:
    """The Responses API answers 529 to everything: the gateway's tries are on record as
    FAILED planning steps and the attempt is the vendor's failure, not Codex's (told not to
    retry on its own, so the test is quick)."""
    no_retries = ('extra_args = ["-c", "model_providers.agentctl.request_max_retries=0", '
                  '"-c", "model_providers.agentctl.stream_max_retries=0", ')
    bench.config(codex_config(codex_cli, openai.url).replace("extra_args = [", no_retries))
    openai.always = Fault(529)
    try:
        run = bench.start(bench.submit("Ask an overloaded model"), "codex")
    finally:
        openai.always = None
        bench.config(codex_config(codex_cli, openai.url))
    verdict = run["verdict"]
    assert verdict["status"] == "FAILED_INFRASTRUCTURE", verdict
    assert "HTTP 529" in verdict["reasons"][0], verdict["reasons"]
    planning = [s for s in bench.steps(run["runId"]) if s["type"] == "MODEL_PLANNING"]
    assert planning and {(s["status"], s["attributes"]["httpStatus"]) for s in planning} == {
        ("FAILED", 529)}
    assert planning[-1]["attributes"]["retryInSeconds"] is None
