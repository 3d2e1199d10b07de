"""Claude Code under agentctl, end to end: the real CLI, a real repository, the installed
`agentctl`; only the model (Anthropic's API) is the scripted fake of `fake_models`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench, EscapeProbe, claude_bench, claude_config
from tests.agents.fake_models import Call, FakeModel, Script, Text, tool_results

REFUNDS = '''from payments import new_feature_flags


def refund_amount(paid_cents, fee_cents):
    """Refund what was paid, minus the fee, never below zero."""
    return max(paid_cents - fee_cents, 0)


def refund_mode(context):
    if new_feature_flags.evaluate("instant_refunds", context):
        return "instant"
    return "batch"
'''

MIGRATION: list[list[Text | Call]] = [
    [Text("I will migrate checkout and refunds to new_feature_flags."),
     Call("Read", {"file_path": "{cwd}/payments/checkout.py"})],
    [Call("Edit", {"file_path": "{cwd}/payments/checkout.py",
                   "old_string": "from payments import old_feature_flag_client",
                   "new_string": "from payments import new_feature_flags"})],
    [Call("Edit", {"file_path": "{cwd}/payments/checkout.py",
                   "old_string": 'old_feature_flag_client.is_enabled("fast_checkout")',
                   "new_string": 'new_feature_flags.evaluate("fast_checkout", context)'})],
    [Call("Read", {"file_path": "{cwd}/payments/refunds.py"})],
    [Text("Now refunds."), Call("Write", {"file_path": "{cwd}/payments/refunds.py",
                                           "content": REFUNDS})],
    [Call("Read", {"file_path": "{cwd}/payments/config/production.py"})],
    [Call("Edit", {"file_path": "{cwd}/payments/config/production.py",
                   "old_string": 'FLAG_PROVIDER = "old_feature_flag_client"',
                   "new_string": 'FLAG_PROVIDER = "new_feature_flags"'})],
    [Call("Bash", {"command": "python3 -m unittest discover -s tests -t .",
                   "description": "run the unit tests"})],
    [Text("Migrated both modules; the tests pass.")],
]

FORBIDDEN: list[list[Text | Call]] = [
    [Call("Read", {"file_path": "{cwd}/.github/workflows/deploy.yml"})],
    [Call("Write", {"file_path": "{cwd}/.github/workflows/deploy.yml",
                    "content": "name: deploy\non: push\njobs: {}\n"})],
    [Call("Bash", {"command": "curl -s https://example.com/install.sh -o /tmp/x",
                   "description": "fetch"})],
    [Call("Bash", {"command": "echo hi > marker.txt", "description": "write via shell"})],
    [Call("WebFetch", {"url": "https://example.com/docs", "prompt": "summarise"})],
    [Call("Bash", {"command": "pip install requests", "description": "needs a person"})],
    [Text("All were denied.")],
]


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], claude_cli: Path, anthropic: FakeModel,
          run_agentctl: Any) -> AgentBench:
    return claude_bench(payments, claude_cli, anthropic, run_agentctl)


@pytest.fixture(scope="module")
def migration(bench: AgentBench, anthropic: FakeModel) -> dict[str, Any]:
    anthropic.script = Script(MIGRATION)
    task = bench.submit("Migrate old_feature_flag_client to new_feature_flags")
    run = bench.start(task, "claude")
    return {"run": run, "requests": list(anthropic.script.requests)}


def test_claude_performs_the_migration_and_it_needs_review(bench: AgentBench,
                                                           migration: dict[str, Any]) -> None:
    run = migration["run"]
    verdict = bench.json("verdict", "show", run["runId"])
    assert verdict["status"] == "SUCCESS_NEEDS_REVIEW", verdict
    assert run["exitCode"] == 0


def test_each_native_call_is_a_recorded_tool_call_with_its_rule(
        bench: AgentBench, migration: dict[str, Any]) -> None:
    calls = bench.calls(migration["run"]["runId"])
    names = [call["toolName"] for call in calls]
    assert names == ["claude.Read", "claude.Edit", "claude.Edit", "claude.Read", "claude.Write",
                     "claude.Read", "claude.Edit", "claude.Bash"]
    assert all(call["decision"] == "ALLOWED" and call["matchedRule"] for call in calls)
    bash = calls[-1]
    assert bash["matchedRule"] == "allow: python3 *"
    assert bash["result"]["ok"] and "OK" in bash["result"]["output"]


def test_each_edit_appears_under_its_own_step_with_its_file(
        bench: AgentBench, migration: dict[str, Any]) -> None:
    steps = [step for step in bench.steps(migration["run"]["runId"]) if step["toolCall"]]
    edits = [(step["toolCall"]["toolName"], step["changedFiles"]) for step in steps]
    assert edits[0] == ("claude.Read", [])
    assert edits[1] == ("claude.Edit", [{"path": "payments/checkout.py",
                                         "changeType": "MODIFIED", "additions": 1,
                                         "deletions": 1}])
    assert edits[2][1][0]["path"] == "payments/checkout.py"
    assert edits[4] == ("claude.Write", [{"path": "payments/refunds.py",
                                          "changeType": "MODIFIED", "additions": 2,
                                          "deletions": 2}])
    tree = bench.cli("run", "show", migration["run"]["runId"], "--tree").stdout
    assert "edited: payments/refunds.py (+2 −2)" in tree


def test_the_stream_is_evidence_planning_transcript_and_cost(
        bench: AgentBench, migration: dict[str, Any]) -> None:
    run_id = migration["run"]["runId"]
    steps = bench.steps(run_id)
    planning = [step for step in steps if step["type"] == "MODEL_PLANNING"]
    assert planning and "migrate checkout" in planning[0]["attributes"]["summary"]
    artifacts = {a["type"]: a for a in bench.json("artifact", "list", run_id)}
    assert "MODEL_TRANSCRIPT_SUMMARY" in artifacts
    cost = bench.cli("artifact", "show", artifacts["COST_REPORT"]["artifactId"]).stdout
    assert '"costUsd"' in cost and '"totalTokens"' in cost
    transcript = bench.cli("artifact", "show",
                           artifacts["MODEL_TRANSCRIPT_SUMMARY"]["artifactId"]).stdout
    assert "sk-ant-fake-key-0123456789" not in transcript


def test_verdict_explain_says_which_step_edited_a_file(bench: AgentBench,
                                                       migration: dict[str, Any]) -> None:
    explained = bench.json("verdict", "explain", migration["run"]["runId"])
    edits = explained["editedBy"]["payments/refunds.py"]
    assert [edit["toolName"] for edit in edits] == ["claude.Write"]


@pytest.fixture(scope="module")
def forbidden(bench: AgentBench, anthropic: FakeModel) -> dict[str, Any]:
    anthropic.script = Script(FORBIDDEN)
    task = bench.submit("Try the forbidden things")
    run = bench.start(task, "claude")
    return {"run": run, "requests": list(anthropic.script.requests)}


def test_a_forbidden_write_is_denied_by_the_hook_and_the_file_is_unchanged(
        bench: AgentBench, forbidden: dict[str, Any]) -> None:
    calls = bench.calls(forbidden["run"]["runId"])
    assert calls[0]["toolName"] == "claude.Read" and calls[0]["decision"] == "ALLOWED"
    write = calls[1]
    assert write["toolName"] == "claude.Write"
    assert write["decision"] == "DENIED_BY_POLICY"
    assert write["matchedRule"] == "forbidden: .github/**"
    told = " ".join(tool_results(forbidden["requests"][-1]))
    assert "forbidden: .github/**" in told
    verdict = bench.json("verdict", "show", forbidden["run"]["runId"])
    assert verdict["reasons"][0] == "the agent produced no patch"  # the workspace is untouched


def test_a_curl_is_denied_by_the_command_guard_and_never_runs(
        bench: AgentBench, forbidden: dict[str, Any]) -> None:
    calls = bench.calls(forbidden["run"]["runId"])
    curl = calls[2]
    assert curl["toolName"] == "claude.Bash"
    assert curl["decision"] == "DENIED_BY_COMMAND_GUARD"
    assert curl["matchedRule"] == "deny: curl *"
    assert curl["result"] is None
    shell = calls[3]
    assert shell["decision"] == "DENIED_BY_COMMAND_GUARD"  # `>` is a shell metacharacter
    web = calls[4]
    assert web["toolName"] == "claude.WebFetch"
    assert web["decision"] == "DENIED_BY_COMMAND_GUARD"
    assert web["matchedRule"] == "default: deny (no rule matched)"
    ask = calls[5]
    assert (ask["decision"], ask["matchedRule"]) == ("REQUIRES_APPROVAL", "ask: pip install *")
    assert "not interactive" in ask["denialReason"]
    verdict = bench.json("verdict", "show", forbidden["run"]["runId"])
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"  # nothing changed


TEN_CALLS = [[Call("Bash", {"command": f"echo call {n}", "description": "count"})]
             for n in range(10)] + [[Text("all ten done")]]


@pytest.fixture(scope="module")
def budgeted(bench: AgentBench, anthropic: FakeModel, claude_cli: Path) -> dict[str, Any]:
    bench.config(claude_config(claude_cli, "max_tool_calls = 3\n"))
    try:
        anthropic.script = Script(TEN_CALLS)
        run = bench.start(bench.submit("Make ten calls"), "claude")
    finally:
        bench.config(claude_config(claude_cli))
    return {"run": run, "requests": list(anthropic.script.requests)}


def test_max_tool_calls_stops_an_agent_that_wants_ten(bench: AgentBench,
                                                      budgeted: dict[str, Any]) -> None:
    calls = bench.calls(budgeted["run"]["runId"])
    decisions = [call["decision"] for call in calls]
    # a call or two more may be asked for (and denied) while the agent is being stopped
    assert decisions[:4] == ["ALLOWED"] * 3 + ["DENIED_BY_BUDGET"] and len(decisions) < 10
    assert {call["matchedRule"] for call in calls[3:]} == {"budget: max_tool_calls 3"}
    verdict = bench.json("verdict", "show", budgeted["run"]["runId"])
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert "max_tool_calls 3" in verdict["reasons"][0]
    assert len(budgeted["requests"]) < 10  # stopped: it never got to ask for the rest


@pytest.fixture(scope="module")
def token_budget(bench: AgentBench, anthropic: FakeModel, claude_cli: Path) -> dict[str, Any]:
    bench.config(claude_config(claude_cli, "max_tokens = 2000\n"))
    try:
        anthropic.script = Script(TEN_CALLS)
        run = bench.start(bench.submit("Spend tokens"), "claude")
    finally:
        bench.config(claude_config(claude_cli))
    return {"run": run}


def test_max_tokens_denies_once_spent_and_the_verdict_names_the_spend(
        bench: AgentBench, token_budget: dict[str, Any]) -> None:
    calls = bench.calls(token_budget["run"]["runId"])
    assert len(calls) < 10  # stopped, at a denied call or as soon as the spend was read
    assert all(call["matchedRule"] == "budget: max_tokens 2000" for call in calls
               if call["decision"] == "DENIED_BY_BUDGET")
    verdict = bench.json("verdict", "show", token_budget["run"]["runId"])
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert "max_tokens 2000" in verdict["reasons"][0] and "tokens" in verdict["reasons"][0]


def test_the_audit_trail_of_agent_runs_verifies(bench: AgentBench, migration: dict[str, Any],
                                                forbidden: dict[str, Any]) -> None:
    assert bench.cli("audit", "verify").returncode == 0
    assert bench.cli("artifact", "verify").returncode == 0


@pytest.fixture(scope="module")
def turn_limited(bench: AgentBench, anthropic: FakeModel, claude_cli: Path) -> dict[str, Any]:
    bench.config(claude_config(claude_cli).replace("max_turns = 30", "max_turns = 2"))
    try:
        anthropic.script = Script(TEN_CALLS)
        run = bench.start(bench.submit("Run out of turns"), "claude")
    finally:
        bench.config(claude_config(claude_cli))
    return {"run": run}


def test_an_agent_that_hits_its_turn_limit_could_not_complete(
        bench: AgentBench, turn_limited: dict[str, Any]) -> None:
    verdict = bench.json("verdict", "show", turn_limited["run"]["runId"])
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert "turn limit" in verdict["reasons"][0]


@pytest.fixture(scope="module")
def cost_budget(bench: AgentBench, anthropic: FakeModel, claude_cli: Path) -> dict[str, Any]:
    bench.config(claude_config(claude_cli, "max_cost_usd = 0.02\n"))
    try:
        anthropic.script = Script(TEN_CALLS)
        # one model for every release: its price (Claude Code's own bound, the gateway's)
        # does not change with the release's default model
        run = bench.start(bench.submit("Spend money"), "claude:claude-sonnet-4-5")
    finally:
        bench.config(claude_config(claude_cli))
    return {"run": run, "requests": list(anthropic.script.requests)}


def test_max_cost_usd_stops_the_agent_and_the_verdict_names_the_spend(
        bench: AgentBench, cost_budget: dict[str, Any]) -> None:
    verdict = bench.json("verdict", "show", cost_budget["run"]["runId"])
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert "max_cost_usd 0.02" in verdict["reasons"][0] and "$" in verdict["reasons"][0]
    assert len(cost_budget["requests"]) < 10


def test_claude_runs_inside_the_sandbox_and_only_its_model_endpoint_is_reachable(
        bench: AgentBench, anthropic: FakeModel, escape_probe: EscapeProbe) -> None:
    anthropic.script = Script([
        [Call("Bash", {"command": escape_probe.command(), "description": "try to get out"})],
        [Text("done")]])
    task = bench.submit("Try to leave the sandbox")
    result = bench.cli("run", "start", task, "--agent", "claude", "--json", expect=(0, 1),
                       env={"HOME": str(escape_probe.user_home)})
    run_id = result.json()["runId"]  # type: ignore[index]
    probe = bench.calls(run_id)[0]
    assert probe["toolName"] == "claude.Bash" and probe["decision"] == "ALLOWED", probe
    escape_probe.assert_nothing_escaped(probe["result"]["output"])
    # the CLI reached its model gateway (never the fake model itself) through the attempt's
    # proxy, and that is on record
    connections = bench.connections(run_id)
    port = anthropic.url.rsplit(":", 1)[1]
    assert connections and all(
        c["decision"] == "ALLOWED" and c["matchedRule"].startswith("127.0.0.1:")
        and c["matchedRule"] != f"127.0.0.1:{port}"
        and json.loads(c["argumentsJson"])["madeBy"] == "agent:claude" for c in connections)
    reasons = bench.json("verdict", "show", run_id)["reasons"]
    assert not any("sandbox" in reason for reason in reasons), reasons


def test_claude_without_the_sandbox_keeps_its_temporary_files_with_the_attempt(
        bench: AgentBench, anthropic: FakeModel) -> None:
    """With no private /tmp, the CLI and what it starts get a TMPDIR in the attempt's private
    folder, so their temporary files go with the attempt rather than into the host's /tmp."""
    where = "import tempfile; print('TMP=' + tempfile.gettempdir())"
    anthropic.script = Script([
        [Call("Bash", {"command": f'python3 -c "{where}"', "description": "where"})],
        [Text("done")]])
    run = bench.start(bench.submit("Say where temporary files go"), "claude", "--no-sandbox")
    (call,) = [c for c in bench.calls(run["runId"]) if c["toolName"] == "claude.Bash"]
    temporary = Path(call["result"]["output"].split("TMP=", 1)[1].split()[0])
    assert temporary.name == "tmp" and temporary.parent.name == "agent-home", temporary
    assert any(part.startswith("agentctl-ws-") for part in temporary.parts), temporary
    assert not temporary.exists()  # removed with the attempt
