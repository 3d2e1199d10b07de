"""A `command:` agent through agentctl's model gateway (`[agents.command] gateway`): the agent
is a real subprocess (a small Python script speaking the vendors' HTTP APIs with urllib, at the
base URL it is given), sandboxed as every command agent is; only the model APIs are the
scripted fakes of `fake_models`, and what they receive is what these tests assert."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agentctl.domain.model_faults import Retries
from tests.agents.conftest import AgentBench
from tests.agents.fake_models import FakeModel, Fault, Script, Text
from tests.agents.key_search import SCRIPT as KEY_SEARCH

KEY = "sk-ant-command-real-7c1e5a9b3d"
OPENAI_KEY = "sk-openai-command-real-2b8d4f6a"
AGENT = '''\
import json, os, subprocess, sys, urllib.request

api, reversed_key, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
search = subprocess.run([sys.executable, "-c", sys.argv[4], reversed_key],
                        capture_output=True, text=True).stdout.strip()
print(search)
print("URLS", os.environ.get("ANTHROPIC_BASE_URL"), os.environ.get("OPENAI_BASE_URL"),
      os.environ.get("OPENAI_API_BASE"))
messages = [{"role": "user", "content": "the search said: " + search}]
for number in range(rounds):
    if api == "anthropic":
        url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
        headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"],
                   "anthropic-version": "2023-06-01"}
        body = {"model": "claude-sonnet-4-5", "max_tokens": 1000, "stream": True,
                "messages": messages}
    else:
        url = os.environ["OPENAI_BASE_URL"] + "/responses"
        headers = {"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}
        body = {"model": "gpt-5", "stream": True, "input": messages}
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {**headers, "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = response.read().decode()
    print("ANSWER", number, len(answer), "error" in answer)
    messages += [{"role": "assistant", "content": "answer %d" % number},
                 {"role": "user", "content": "go on"}]
with open("payments/gateway_note.py", "w") as note:
    note.write("NOTE = %d\\n" % rounds)
'''


def config(api: str, extra: str = "") -> str:
    return (f'[agents.command]\ngateway = "{api}"\nprices = ["claude-sonnet-4=3/15"]\n\n'
            '[env]\npassthrough = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", '
            '"OPENAI_BASE_URL", "OPENAI_API_KEY"]\n\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n'
            'timeout_seconds = 120\n\n[policy]\nmax_autonomy = "supervised_pr"\n\n'
            "[budget]\nmax_attempts = 1\nbackoff_initial_seconds = 0\nwall_seconds = 120\n"
            f"{extra}")


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], anthropic: FakeModel, run_agentctl: Any) -> AgentBench:
    root, repository = payments
    (root / "agent.py").write_text(AGENT)
    return AgentBench(root, repository, run_agentctl, {
        "ANTHROPIC_BASE_URL": anthropic.url, "ANTHROPIC_API_KEY": KEY})


def agent_spec(bench: AgentBench, api: str, key: str, rounds: int) -> str:
    return (f"command:python3 {bench.root / 'agent.py'} {api} {key[::-1]} {rounds} "
            + shlex.quote(KEY_SEARCH))


@pytest.fixture(scope="module")
def answered(bench: AgentBench, anthropic: FakeModel) -> dict[str, Any]:
    bench.config(config("anthropic"))
    anthropic.script = Script([[Text("First answer.")], [Text("Second answer.")]])
    run = bench.start(bench.submit("Ask the model twice"), agent_spec(bench, "anthropic", KEY, 2))
    return {"run": run, "requests": list(anthropic.script.requests),
            "headers": list(anthropic.script.headers)}


def _output(bench: AgentBench, run_id: str) -> str:
    (call,) = [c for c in bench.calls(run_id) if c["toolName"] == "agent.exec"]
    return str(call["result"]["output"])


def test_the_fake_model_receives_the_real_key_and_the_command_holds_only_a_placeholder(
        bench: AgentBench, answered: dict[str, Any]) -> None:
    headers = answered["headers"]
    assert len(headers) == 2 and all(h.get("x-api-key") == KEY for h in headers), headers
    output = _output(bench, answered["run"]["runId"])
    assert "KEY-HITS [] PLACEHOLDER True" in output, output  # its env, processes and files
    assert int(output.split("FILES", 1)[1].split()[0]) > 10
    urls = output.split("URLS", 1)[1].split()
    assert urls[0].startswith("http://127.0.0.1:") and urls[0] != bench.env[
        "ANTHROPIC_BASE_URL"], urls  # the gateway's, not the model's
    assert KEY not in json.dumps(answered["requests"])
    assert answered["requests"][0]["messages"][0]["content"].startswith(
        "the search said: KEY-HITS [] PLACEHOLDER True")
    gateway = urls[0].rsplit(":", 1)[1]  # reached from inside its sandbox, through its proxy
    reached = [json.loads(c["argumentsJson"]) for c in bench.connections(
        answered["run"]["runId"])]
    assert {(r["host"], str(r["port"])) for r in reached} == {("127.0.0.1", gateway)}, reached


def test_each_exchange_of_a_command_agent_is_a_planning_step_with_a_kept_exchange(
        bench: AgentBench, answered: dict[str, Any]) -> None:
    run_id = answered["run"]["runId"]
    planning = [s for s in bench.steps(run_id) if s["type"] == "MODEL_PLANNING"]
    assert [p["attributes"]["summary"] for p in planning] == ["First answer.",
                                                               "Second answer."]
    first = planning[0]["attributes"]
    assert first["inputTokens"] == 1200 and first["outputTokens"] == 300
    assert first["costUsd"] == pytest.approx((1200 * 3 + 300 * 15) / 1e6)
    assert first["stopReason"] == "end_turn" and first["requestDigest"].startswith("sha256:")
    kept = [a for s in planning for a in s["artifacts"]]
    assert [a["name"] for a in kept] == ["model-exchange.json"] * 2
    assert {a["visibility"] for a in kept} == {"INTERNAL_ONLY"}
    artifacts = bench.json("artifact", "list", run_id)
    cost = json.loads(bench.cli("artifact", "show", next(
        a for a in artifacts if a["name"] == "cost-report.json")["artifactId"]).stdout)
    assert cost["source"] == "gateway" and cost["modelRequests"] == 2
    assert cost["totalTokens"] == 3000 and cost["budgetStop"] is None
    assert answered["run"]["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW")


def test_the_gateway_setting_is_part_of_the_frozen_spec_and_its_digest(
        bench: AgentBench, answered: dict[str, Any]) -> None:
    run = answered["run"]
    assert run["executionSpec"]["commandGateway"] == {"api": "anthropic",
                                                      "prices": ["claude-sonnet-4=3/15"]}
    bench.config(config("openai"))
    try:
        other = bench.cli("run", "start", bench.submit("Queued only"), "--agent",
                          agent_spec(bench, "anthropic", KEY, 1), "--detach", "--json").json()
    finally:
        bench.config(config("anthropic"))
    assert other["executionSpec"]["commandGateway"]["api"] == "openai"
    assert other["specDigest"] != run["specDigest"]
    bench.cli("run", "cancel", other["runId"])


def test_an_openai_command_agent_gets_both_base_url_variables(
        bench: AgentBench, openai: FakeModel) -> None:
    bench.config(config("openai"))
    try:
        openai.script = Script([[Text("An answer.")]])
        result = bench.cli("run", "start", bench.submit("Ask once"), "--agent",
                           agent_spec(bench, "openai", OPENAI_KEY, 1), "--json", expect=(0, 1),
                           env={"OPENAI_BASE_URL": openai.url + "/v1",
                                "OPENAI_API_KEY": OPENAI_KEY})
    finally:
        bench.config(config("anthropic"))
    run = result.json()
    assert [h.get("authorization") for h in openai.script.headers] == [f"Bearer {OPENAI_KEY}"]
    output = _output(bench, run["runId"])
    assert "KEY-HITS [] PLACEHOLDER True" in output, output
    _anthropic, base, api_base = output.split("URLS", 1)[1].split()[:3]
    assert base == api_base and base.startswith("http://127.0.0.1:") and base.endswith("/v1")
    planning = [s for s in bench.steps(run["runId"]) if s["type"] == "MODEL_PLANNING"]
    assert [p["attributes"]["summary"] for p in planning] == ["An answer."]


LONG = " ".join(f"word{n}" for n in range(3000))


def test_a_token_budget_stops_a_command_agent_mid_answer_with_denied_by_budget(
        bench: AgentBench, anthropic: FakeModel) -> None:
    bench.config(config("anthropic", "max_tokens = 300\n"))
    try:
        anthropic.script = Script([[Text(LONG)], [Text(LONG)]], usage=(100, 4000), chunk=40)
        run = bench.start(bench.submit("Ask for a long answer"),
                          agent_spec(bench, "anthropic", KEY, 3))
    finally:
        bench.config(config("anthropic"))
    assert len(anthropic.script.requests) == 1  # nothing more reached the model
    planning = [s["attributes"] for s in bench.steps(run["runId"])
                if s["type"] == "MODEL_PLANNING"]
    stopped = [p for p in planning if p.get("decision") == "DENIED_BY_BUDGET"]
    assert len(stopped) == 1 and stopped[0]["matchedRule"] == "budget: max_tokens 300"
    spent = stopped[0]["inputTokens"] + stopped[0]["outputTokens"]
    assert 300 <= spent <= 300 + 10  # at most one event (40 characters) past it
    verdict = run["verdict"]
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE", verdict
    assert "max_tokens 300" in verdict["reasons"][0] and f"{spent} model tokens" in \
        verdict["reasons"][0], verdict["reasons"]


UNLUCKY = '''\
import os, urllib.error, urllib.request

base = os.environ["ANTHROPIC_BASE_URL"]
headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "content-type": "application/json"}
status = 0
for path in ("/v1/messages/batches", "/v1/messages"):
    request = urllib.request.Request(base + path, b'{"model": "claude-sonnet-4-5"}', headers)
    try:
        status = urllib.request.urlopen(request, timeout=60).status
    except urllib.error.HTTPError as error:
        status = error.code
    print("ANSWER", path, status)
raise SystemExit(1 if status >= 500 else 0)
'''


def test_a_command_agent_whose_model_keeps_failing_ends_failed_infrastructure_after_retries(
        bench: AgentBench, anthropic: FakeModel) -> None:
    """The vendor answers 500 to everything: the gateway tries each request again within its
    bound, every try is a FAILED planning step, and the attempt is an infrastructure failure
    (retried as one) rather than the agent's. An off-API request is a denied call."""
    (bench.root / "unlucky.py").write_text(UNLUCKY)
    bench.config(config("anthropic").replace("max_attempts = 1", "max_attempts = 2"))
    anthropic.always, seen = Fault(500), len(anthropic.seen)
    try:
        run = bench.start(bench.submit("Ask a failing model"),
                          f"command:python3 {bench.root / 'unlucky.py'}")
    finally:
        anthropic.always = None
        bench.config(config("anthropic"))
    verdict = run["verdict"]
    assert verdict["status"] == "FAILED_INFRASTRUCTURE", verdict
    assert "model could not be reached" in verdict["reasons"][0], verdict["reasons"]
    assert "HTTP 500" in verdict["reasons"][0]
    attempts = bench.tree(run["runId"])["attempts"]
    assert len(attempts) == 2  # retried as an infrastructure failure
    tries = Retries().tries
    assert len(anthropic.seen) - seen == 2 * tries  # the batch request never left
    for attempt in attempts:
        planning = [s for s in attempt["steps"] if s["type"] == "MODEL_PLANNING"]
        assert [(s["status"], s["attributes"]["httpStatus"]) for s in planning] == [
            ("FAILED", 500)] * tries
        assert planning[-1]["attributes"]["retryInSeconds"] is None
        refused = [s["toolCall"] for s in attempt["steps"] if s["toolCall"]
                   and s["toolCall"]["toolName"] == "model.request"]
        assert [(c["decision"], json.loads(c["argumentsJson"])["target"]) for c in refused] == [
            ("DENIED_BY_POLICY", "/v1/messages/batches")]


HUNG = '''\
import os, urllib.error, urllib.request

request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    b'{"model": "claude-sonnet-4-5", "max_tokens": 10, "stream": true, "messages": []}',
    {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "content-type": "application/json"})
try:
    status = urllib.request.urlopen(request, timeout=60).status
except urllib.error.HTTPError as error:
    status = error.code
print("ANSWER", status)
raise SystemExit(1 if status >= 500 else 0)
'''


def test_a_model_that_hangs_is_given_up_on_at_the_configured_timeout_and_on_record(
        bench: AgentBench, anthropic: FakeModel) -> None:
    """The vendor takes the prompt and never answers: under `[gateway] timeout_seconds = 1`
    the gateway gives the request up after a second (not the default ten minutes) and never
    sends it again; the run has a TIMED_OUT planning step, a cost report that counts the
    request, and ends FAILED_INFRASTRUCTURE."""
    (bench.root / "hung.py").write_text(HUNG)
    bench.config(config("anthropic", "\n[gateway]\ntimeout_seconds = 1\n"))
    anthropic.always, seen = Fault(hang=10.0), len(anthropic.seen)
    try:
        run = bench.start(bench.submit("Ask a hanging model"),
                          f"command:python3 {bench.root / 'hung.py'}")
    finally:
        anthropic.always = None
        bench.config(config("anthropic"))
    verdict = run["verdict"]
    assert verdict["status"] == "FAILED_INFRASTRUCTURE", verdict
    assert "no answer within 1 s" in verdict["reasons"][0], verdict["reasons"]
    assert run["executionSpec"]["budget"]["modelTimeoutSeconds"] == 1
    assert len(anthropic.seen) - seen == 1  # the vendor has the prompt: not sent twice
    (attempt,) = bench.tree(run["runId"])["attempts"]
    planning = [s for s in attempt["steps"] if s["type"] == "MODEL_PLANNING"]
    assert [(s["status"], s["attributes"]["httpStatus"]) for s in planning] == [
        ("TIMED_OUT", 504)]
    artifacts = bench.json("artifact", "list", run["runId"])
    cost = json.loads(bench.cli("artifact", "show", next(
        a for a in artifacts if a["name"] == "cost-report.json")["artifactId"]).stdout)
    assert cost["source"] == "gateway" and cost["modelRequests"] == 1


def test_a_command_agent_whose_upstream_is_no_http_url_is_not_started_and_says_why(
        bench: AgentBench, anthropic: FakeModel) -> None:
    """The gateway refuses an upstream that is no http(s) URL before the command starts: the
    attempt ends with the agent's error naming it, and no model request leaves."""
    bench.config(config("anthropic"))
    seen = len(anthropic.seen)
    result = bench.cli("run", "start", bench.submit("Ask nowhere"), "--agent",
                       agent_spec(bench, "anthropic", KEY, 1), "--json", expect=(0, 1),
                       env={"ANTHROPIC_BASE_URL": "ftp://models.invalid"})
    run = result.json()
    assert "the agent cannot start its model gateway" in json.dumps(run), run
    assert len(anthropic.seen) == seen
    assert not (bench.repo / "payments" / "gateway_note.py").exists()  # the command never ran
