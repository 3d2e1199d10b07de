"""Codex under agentctl, end to end: the real CLI, a real repository, the installed `agentctl`;
only the model (an OpenAI Responses API) is the scripted fake of `fake_models`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from agentctl.execution.agents.hook_binary import cache_dir, native_hook
from tests.agents.conftest import AgentBench, EscapeProbe
from tests.agents.fake_models import Call, FakeModel, Script, Text, function_outputs

CATALOG = Path(__file__).with_name("codex-catalog.json")  # lets Codex offer apply_patch

BOTH = """*** Begin Patch
*** Update File: payments/refunds.py
@@
-from payments import old_feature_flag_client
+from payments import new_feature_flags
*** Add File: .github/workflows/extra.yml
+name: extra
*** End Patch
"""
REFUNDS = """*** Begin Patch
*** Update File: payments/refunds.py
@@
-from payments import old_feature_flag_client
+from payments import new_feature_flags
@@
 def refund_mode(context):
-    if old_feature_flag_client.is_enabled("instant_refunds"):
+    if new_feature_flags.evaluate("instant_refunds", context):
*** End Patch
"""
SCRIPT = [
    [Text("Patching refunds and the workflow."), Call("apply_patch", BOTH)],
    [Call("exec_command", {"cmd": "python3 -c \"import sys; print('checked'); sys.exit(3)\""})],
    [Call("apply_patch", REFUNDS)],
    [Text("Refunds migrated.")],
]


def codex_config(codex: Path, url: str) -> str:
    return (f'[agents.codex]\ncommand = "{codex}"\nmodel = "fake-model"\n'
            f'base_url = "{url}/v1"\nenv_key = "FAKE_API_KEY"\n'
            f'extra_args = ["-c", {json.dumps("model_catalog_json=" + json.dumps(str(CATALOG)))}]\n\n'
            '[env]\npassthrough = ["FAKE_API_KEY"]\n\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            '[budget]\nmax_attempts = 1\nwall_seconds = 300\n')


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], codex_cli: Path, openai: FakeModel,
          run_agentctl: Any) -> AgentBench:
    root, repository = payments
    bench = AgentBench(root, repository, run_agentctl, {"FAKE_API_KEY": "sk-fake-openai-0123456789"})
    bench.config(codex_config(codex_cli, openai.url))
    return bench


@pytest.fixture(scope="module")
def codex_run(bench: AgentBench, openai: FakeModel) -> dict[str, Any]:
    openai.script = Script(SCRIPT)
    run = bench.start(bench.submit("Migrate refunds to new_feature_flags"), "codex")
    return {"run": run, "requests": list(openai.script.requests)}


def test_an_apply_patch_touching_a_forbidden_path_is_denied_with_both_paths(
        bench: AgentBench, codex_run: dict[str, Any]) -> None:
    calls = bench.calls(codex_run["run"]["runId"])
    patch = calls[0]
    assert patch["toolName"] == "codex.apply_patch"
    assert patch["decision"] == "DENIED_BY_POLICY"
    assert patch["matchedRule"] == "forbidden: .github/**"
    assert json.loads(patch["argumentsJson"])["paths"] == ["payments/refunds.py",
                                                          ".github/workflows/extra.yml"]
    told = " ".join(function_outputs(codex_run["requests"][1]))
    assert "forbidden: .github/**" in told


def test_a_shell_call_runs_and_is_recorded_with_its_exit_code(
        bench: AgentBench, codex_run: dict[str, Any]) -> None:
    shell = bench.calls(codex_run["run"]["runId"])[1]
    assert shell["toolName"] == "codex.Bash"
    assert shell["decision"] == "ALLOWED" and shell["matchedRule"] == "allow: python3 *"
    assert shell["result"]["exitCode"] == 3 and "checked" in shell["result"]["output"]


def test_the_allowed_patch_is_applied_and_attributed_to_its_step(
        bench: AgentBench, codex_run: dict[str, Any]) -> None:
    steps = [s for s in bench.steps(codex_run["run"]["runId"]) if s["toolCall"]]
    assert steps[2]["toolCall"]["toolName"] == "codex.apply_patch"
    assert steps[2]["toolCall"]["decision"] == "ALLOWED"
    assert steps[2]["changedFiles"] == [{"path": "payments/refunds.py", "changeType": "MODIFIED",
                                         "additions": 2, "deletions": 2}]
    verdict = bench.json("verdict", "show", codex_run["run"]["runId"])
    assert verdict["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), verdict


def test_the_codex_stream_is_evidence(bench: AgentBench, codex_run: dict[str, Any]) -> None:
    run_id = codex_run["run"]["runId"]
    planning = [s for s in bench.steps(run_id) if s["type"] == "MODEL_PLANNING"]
    assert [p["attributes"]["summary"] for p in planning][:1] == [
        "Patching refunds and the workflow."]
    artifacts = {a["type"]: a for a in bench.json("artifact", "list", run_id)}
    cost = json.loads(bench.cli("artifact", "show", artifacts["COST_REPORT"]["artifactId"]).stdout)
    assert cost["agent"] == "codex" and cost["totalTokens"] > 0


def test_codex_runs_inside_the_sandbox_and_only_its_model_endpoint_is_reachable(
        bench: AgentBench, openai: FakeModel, escape_probe: EscapeProbe) -> None:
    hook = native_hook(cache_dir(bench.home), os.environ).binary  # the one the run starts
    assert hook is not None, "no compiled hook: is cc on PATH?"
    escape_probe.keep(hook)  # a jailed shell call cannot overwrite it
    openai.script = Script([[Call("exec_command", {"cmd": escape_probe.command()})],
                            [Text("done")]])
    task = bench.submit("Try to leave the sandbox")
    result = bench.cli("run", "start", task, "--agent", "codex", "--json", expect=(0, 1),
                       env={"HOME": str(escape_probe.user_home)})
    run_id = result.json()["runId"]
    probe = bench.calls(run_id)[0]
    assert probe["toolName"] == "codex.Bash" and probe["decision"] == "ALLOWED", probe
    told = " ".join(function_outputs(openai.script.requests[-1]))
    escape_probe.assert_nothing_escaped(told)
    connections = bench.connections(run_id)
    port = openai.url.rsplit(":", 1)[1]
    assert all(json.loads(c["argumentsJson"])["madeBy"] == "agent:codex" for c in connections)
    model = [c for c in connections if json.loads(c["argumentsJson"])["host"] == "127.0.0.1"]
    # its model gateway, never the fake model itself
    assert model and all(c["decision"] == "ALLOWED" and c["matchedRule"].startswith("127.0.0.1:")
                         and c["matchedRule"] != f"127.0.0.1:{port}" for c in model)
    # Codex also calls home (github.com, chatgpt.com...): each is blocked and on record
    others = [c for c in connections if c not in model]
    assert all(c["decision"] == "DENIED_BY_POLICY" and "not in [sandbox.network] allow"
               in c["denialReason"] for c in others)
    reasons = bench.json("verdict", "show", run_id)["reasons"]
    assert not any("sandbox" in reason for reason in reasons), reasons


# Prints, sleeps, writes a file and says so: Codex gives its `exec_command` back to the model
# after `yield_time_ms` (250 ms) with the command still running, and fires no PostToolUse then
# (only once a `write_stdin` poll, which fires no hook, sees the command end).
POLLED, UNPOLLED = "held-polled-7e2a.txt", "held-unpolled-7e2a.txt"


def outlives_its_yield(marker: str, seconds: float) -> str:
    return (f"python3 -c \"import time; print('start', flush=True); time.sleep({seconds}); "
            f"open('{marker}', 'w').write('late'); print('wrote')\"")


def processes_naming(word: str) -> list[int]:
    """The processes on this machine whose command line names `word`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and word.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile
    return [pid for pid in found if pid != os.getpid()]


def test_a_command_still_running_when_codex_yields_its_call_holds_the_model_until_it_ends(
        bench: AgentBench, openai: FakeModel) -> None:
    """Codex returns the call to its model while the command runs: the model request that
    carries the call's result waits at the gateway until the command ended, so the model (and
    any other call) comes after it. The model polls the first with `write_stdin`: Codex's
    PostToolUse closes it with the exit code and the output after the yield, put after what
    the model was told with the yield. The second it never polls:
    closed at the end with the exit code agentctl saw. Each one's write is on its own step."""
    seen: list[tuple[int, list[str], list[int]]] = []  # at each request giving back a call

    def look(body: dict[str, Any]) -> None:
        told = len(function_outputs(body))
        if told in (1, 3):  # the first call yielded; the second one
            # anywhere in the attempt's folder: its work tree, or a tree view's upper layer
            said = re.search(r"Workspace: (/[^\s\\\"]+)", json.dumps(body["input"]))
            folder = Path(said.group(1)).parent if said else None
            written = [m for m in (POLLED, UNPOLLED) if folder and any(folder.rglob(m))]
            seen.append((told, written, processes_naming("-7e2a.txt")))

    openai.script = Script([
        [Call("exec_command", {"cmd": outlives_its_yield(POLLED, 1.5), "yield_time_ms": 250})],
        [Call("write_stdin", {"session_id": "{session}", "chars": "", "yield_time_ms": 5000})],
        [Call("exec_command", {"cmd": outlives_its_yield(UNPOLLED, 0.5), "yield_time_ms": 250})],
        [Text("done")]], hold=look)
    run = bench.start(bench.submit("Run the slow scripts"), "codex")
    # held: the model heard of each call once its command had written and was gone
    assert seen == [(1, [POLLED], []), (3, [POLLED, UNPOLLED], [])], seen
    yielded, polled, unpolled = function_outputs(openai.script.requests[-1])
    assert "Process running with session ID" in yielded, yielded  # Codex did return it early
    assert "Process running with session ID" in unpolled, unpolled
    assert "Process exited with code 0" in polled and "wrote" in polled, polled
    first, second = bench.calls(run["runId"])  # the poll fires no hook: not a call
    assert first["toolName"] == second["toolName"] == "codex.Bash", (first, second)
    assert first["result"]["outcome"] == "ok" and first["result"]["exitCode"] == 0, first
    assert first["result"]["output"] == "start\nwrote\n", first["result"]  # before and after
    assert second["result"]["outcome"] == "failed" and second["result"]["exitCode"] == 0
    assert second["result"]["error"] == ("the agent reported no result (its command exited "
                                         "with code 0)"), second["result"]
    steps = bench.steps(run["runId"])
    for marker, call in ((POLLED, first), (UNPOLLED, second)):  # each write is its call's
        (step,) = [step for step in steps if marker in json.dumps(step["changedFiles"])]
        assert step["toolCall"]["toolCallId"] == call["toolCallId"], (marker, step)
    reasons = bench.json("verdict", "show", run["runId"])["reasons"]
    assert not any("no recorded call made" in reason for reason in reasons), reasons
    assert processes_naming("-7e2a.txt") == []
