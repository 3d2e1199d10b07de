"""Gemini CLI under agentctl, end to end: the real CLI, a real repository, the installed
`agentctl`; only the model (Gemini's API) is the scripted fake of `fake_gemini`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench
from tests.agents.fake_gemini import function_responses, gemini_server
from tests.agents.fake_models import Call, FakeModel, Script, Text
from tests.agents.test_claude import REFUNDS
from tests.agents.test_planted_config import patch_paths

KEY = "AIza-real-gemini-key-7c41d0e9b2"
PROBE = "import os; print('KEY=' + str(os.environ.get('GEMINI_API_KEY')) + ' HOME-GEMINI=' + " \
        "str(os.path.isdir(os.path.expanduser('~/.gemini'))))"
SCRIPT: list[list[Text | Call]] = [
    [Text("Migrating refunds first."),
     Call("write_file", {"file_path": "{cwd}/payments/refunds.py", "content": REFUNDS})],
    [Call("run_shell_command", {"command": f'python3 -c "{PROBE}"',
                                "description": "where does this run"})],
    [Call("run_shell_command", {"command": "curl -s https://example.com/x.sh -o marker.txt",
                                "description": "fetch"})],
    [Call("run_shell_command", {"command": "echo hi > marker.txt", "description": "marker"})],
    [Call("write_file", {"file_path": ".github/workflows/deploy.yml",
                         "content": "name: deploy\non: push\njobs: {}\n"})],
    [Call("run_shell_command", {"command": 'python3 -c "import sys; print(7); sys.exit(3)"'})],
    [Text("Refunds migrated; the rest was denied.")],
]


def gemini_config(gemini: Path, extra: str = "") -> str:
    return (f'[agents.gemini]\ncommand = "{gemini}"\nmodel = "gemini-2.5-pro"\nmax_turns = 30\n\n'
            '[env]\npassthrough = ["GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"]\n\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n'
            'timeout_seconds = 120\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            f"[budget]\nmax_attempts = 1\nbackoff_initial_seconds = 0\nwall_seconds = 300\n{extra}")


@pytest.fixture(scope="module")
def gemini() -> Any:
    server = gemini_server()
    yield server
    server.close()


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], gemini_cli: Path, gemini: FakeModel,
          run_agentctl: Any) -> AgentBench:
    root, repository = payments
    bench = AgentBench(root, repository, run_agentctl, {
        "GOOGLE_GEMINI_BASE_URL": gemini.url, "GEMINI_API_KEY": KEY})
    bench.config(gemini_config(gemini_cli))
    return bench


@pytest.fixture(scope="module")
def scripted(bench: AgentBench, gemini: FakeModel) -> dict[str, Any]:
    gemini.script = Script(SCRIPT)
    run = bench.start(bench.submit("Migrate refunds to new_feature_flags"), "gemini")
    return {"run": run, "requests": list(gemini.script.requests),
            "headers": list(gemini.script.headers), "paths": list(gemini.script.paths),
            "calls": bench.calls(run["runId"])}


def test_each_native_call_is_recorded_with_its_decision_and_rule(
        scripted: dict[str, Any]) -> None:
    calls = scripted["calls"]
    assert [(c["toolName"], c["decision"], c["matchedRule"]) for c in calls] == [
        ("gemini.write_file", "ALLOWED", "workspace"),
        ("gemini.run_shell_command", "ALLOWED", "allow: python3 *"),
        ("gemini.run_shell_command", "DENIED_BY_COMMAND_GUARD", "deny: curl *"),
        ("gemini.run_shell_command", "DENIED_BY_COMMAND_GUARD", calls[3]["matchedRule"]),
        ("gemini.write_file", "DENIED_BY_POLICY", "forbidden: .github/**"),
        ("gemini.run_shell_command", "ALLOWED", "allow: python3 *"),
    ], calls


def test_an_allowed_write_is_made_and_attributed_to_its_step(
        bench: AgentBench, scripted: dict[str, Any]) -> None:
    run_id = scripted["run"]["runId"]
    steps = [step for step in bench.steps(run_id) if step["toolCall"]]
    assert steps[0]["toolCall"]["toolName"] == "gemini.write_file"
    assert steps[0]["changedFiles"] == [{"path": "payments/refunds.py", "changeType": "MODIFIED",
                                         "additions": 2, "deletions": 2}]
    assert steps[0]["toolCall"]["result"]["ok"]
    assert patch_paths(bench, run_id) == {"payments/refunds.py"}


def test_an_allowed_shell_call_runs_in_its_jail_and_its_output_is_recorded(
        scripted: dict[str, Any]) -> None:
    shell = scripted["calls"][1]
    # recorded as the model asked for it (the CLI ran the jail's stub in its place), with the
    # output of the jailed run: no model key and no CLI home in there
    assert json.loads(shell["argumentsJson"])["command"].startswith("python3 -c")
    assert shell["result"]["ok"], shell
    assert "KEY=None HOME-GEMINI=False" in shell["result"]["output"], shell["result"]


def test_a_failing_shell_call_is_recorded_with_its_exit_code(scripted: dict[str, Any]) -> None:
    result = scripted["calls"][5]["result"]
    assert (result["ok"], result["exitCode"], result["error"]) == (False, 3,
                                                                   "exited with code 3"), result
    assert "7" in result["output"]


def test_a_denied_shell_call_never_runs(bench: AgentBench, scripted: dict[str, Any]) -> None:
    curl, redirect = scripted["calls"][2:4]
    assert curl["result"] is None and redirect["result"] is None
    assert "marker.txt" not in patch_paths(bench, scripted["run"]["runId"])
    told = " ".join(function_responses(scripted["requests"][-1]))
    assert "deny: curl *" in told, told  # the model was told which rule denied it


def test_a_forbidden_write_is_refused_and_the_file_never_written(
        bench: AgentBench, scripted: dict[str, Any]) -> None:
    write = scripted["calls"][4]
    assert write["result"] is None
    assert "forbidden: .github/**" in " ".join(function_responses(scripted["requests"][-1]))
    assert not any(path.startswith(".github") for path in
                   patch_paths(bench, scripted["run"]["runId"]))


def test_the_model_is_reached_through_the_gateway_with_a_placeholder_key(
        bench: AgentBench, scripted: dict[str, Any]) -> None:
    headers = scripted["headers"]
    assert headers and all(h.get("x-goog-api-key") == KEY for h in headers), headers
    assert all(path.startswith("/v1beta/models/gemini-2.5-pro:") for path in scripted["paths"])
    run_id = scripted["run"]["runId"]
    assert KEY not in json.dumps(bench.tree(run_id))
    cost = json.loads(bench.cli("artifact", "show", next(
        a for a in bench.json("artifact", "list", run_id)
        if a["type"] == "COST_REPORT")["artifactId"]).stdout)
    requests = len(scripted["requests"])
    assert cost["source"] == "gateway" and cost["modelRequests"] == requests
    assert cost["inputTokens"] == 1200 * requests and cost["outputTokens"] == 300 * requests
    assert cost["costUsd"] > 0


def test_the_model_turns_are_planning_steps_with_their_text(
        bench: AgentBench, scripted: dict[str, Any]) -> None:
    planning = [s for s in bench.steps(scripted["run"]["runId"]) if s["type"] == "MODEL_PLANNING"]
    assert len(planning) == len(scripted["requests"])
    first = planning[0]["attributes"]
    assert first["summary"] == "Migrating refunds first."
    assert first["inputTokens"] == 1200 and first["outputTokens"] == 300
    assert first["model"] == "gemini-2.5-pro" and first["stopReason"] == "STOP"


TEN_CALLS: list[list[Text | Call]] = [
    [Call("run_shell_command", {"command": f"echo call {n}", "description": "count"})]
    for n in range(10)] + [[Text("all ten done")]]


@pytest.fixture(scope="module")
def token_budget(bench: AgentBench, gemini: FakeModel, gemini_cli: Path) -> dict[str, Any]:
    bench.config(gemini_config(gemini_cli, "max_tokens = 2000\n"))
    try:
        gemini.script = Script(TEN_CALLS)
        run = bench.start(bench.submit("Spend tokens"), "gemini")
    finally:
        bench.config(gemini_config(gemini_cli))
    return {"run": run, "requests": list(gemini.script.requests)}


def test_max_tokens_stops_gemini_mid_stream_and_the_verdict_names_the_spend(
        bench: AgentBench, token_budget: dict[str, Any]) -> None:
    assert len(token_budget["requests"]) < 4  # 1,500 tokens a turn: stopped in the second
    calls = bench.calls(token_budget["run"]["runId"])
    assert len(calls) < 3
    verdict = bench.json("verdict", "show", token_budget["run"]["runId"])
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert "max_tokens 2000" in verdict["reasons"][0], verdict


@pytest.fixture(scope="module")
def turn_limited(bench: AgentBench, gemini: FakeModel, gemini_cli: Path) -> dict[str, Any]:
    bench.config(gemini_config(gemini_cli).replace("max_turns = 30", "max_turns = 2"))
    try:
        gemini.script = Script(TEN_CALLS)
        run = bench.start(bench.submit("Run out of turns"), "gemini")
    finally:
        bench.config(gemini_config(gemini_cli))
    return {"run": run, "requests": list(gemini.script.requests)}


def test_gemini_that_hits_its_turn_limit_could_not_complete(
        bench: AgentBench, turn_limited: dict[str, Any]) -> None:
    assert len(turn_limited["requests"]) < 10
    verdict = bench.json("verdict", "show", turn_limited["run"]["runId"])
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    reason = verdict["reasons"][0]
    assert reason.startswith("gemini could not complete: it hit its turn limit"), reason
    assert "Ripgrep" not in reason and "YOLO" not in reason  # its start-up notices say nothing


# Run unjailed (no sandbox), a shell call is the CLI's own child: it has the CLI's environment
# and home, where the real key must not be (agentctl's own process holds it; not searched).
OWN = ("import os, sys\nkey = sys.argv[1][::-1]\nhits = [n for n, v in os.environ.items() if key in v]"
       "\nhome = os.environ['HOME']\nfor folder, _, names in os.walk(home):\n for name in names:"
       "\n  try: data = open(os.path.join(folder, name), errors='replace').read()"
       "\n  except OSError: continue\n  if key in data: hits.append(os.path.join(folder, name))"
       "\nprint('HITS', hits, 'PLACEHOLDER', os.environ.get('GEMINI_API_KEY', '')[:17],"
       " 'SETTINGS', os.path.isfile(home + '/.gemini/settings.json'))")


def test_the_real_key_is_nowhere_in_the_clis_environment_or_home(
        bench: AgentBench, gemini: FakeModel) -> None:
    import shlex

    gemini.script = Script([[Call("run_shell_command", {
        "command": shlex.join(["python3", "-c", OWN, KEY[::-1]]), "description": "look"})],
        [Text("done")]])
    run = bench.start(bench.submit("Look for the key"), "gemini", "--no-sandbox")
    (call,) = bench.calls(run["runId"])
    assert call["decision"] == "ALLOWED", call
    output = call["result"]["output"]
    assert "HITS [] PLACEHOLDER agentctl-gateway- SETTINGS True" in output, output


def migration_script() -> list[list[Text | Call]]:
    """Claude's feature-flag migration (test_claude.MIGRATION) in Gemini CLI's tools."""
    from tests.agents.test_claude import MIGRATION

    tools = {"Read": "read_file", "Edit": "replace", "Write": "write_file",
             "Bash": "run_shell_command"}
    said = {"replace": {"instruction": "use new_feature_flags"}}  # replace requires one
    return [[Call(tools[block.name], {**block.input, **said.get(tools[block.name], {})})
             if isinstance(block, Call) and isinstance(block.input, dict) else block
             for block in turn] for turn in MIGRATION]


def test_gemini_performs_the_migration_and_it_needs_review(
        bench: AgentBench, gemini: FakeModel) -> None:
    gemini.script = Script(migration_script())
    run = bench.start(bench.submit("Migrate old_feature_flag_client to new_feature_flags"),
                      "gemini")
    calls = bench.calls(run["runId"])
    assert [c["toolName"].split(".")[1] for c in calls] == [
        "read_file", "replace", "replace", "read_file", "write_file", "read_file", "replace",
        "run_shell_command"]
    assert all(c["decision"] == "ALLOWED" and c["result"]["ok"] for c in calls), calls
    assert "OK" in calls[-1]["result"]["output"]  # the unit tests ran, jailed, and passed
    verdict = bench.json("verdict", "show", run["runId"])
    assert verdict["status"] == "SUCCESS_NEEDS_REVIEW", verdict
    # the key stayed with the gateway; its base URL only says where the model is
    assert not any("held secret" in reason for reason in verdict["reasons"]), verdict
    edits = bench.json("verdict", "explain", run["runId"])["editedBy"]
    assert [e["toolName"] for e in edits["payments/refunds.py"]] == ["gemini.write_file"]
    assert [e["toolName"] for e in edits["payments/checkout.py"]] == ["gemini.replace"] * 2
