"""GitHub Copilot CLI under agentctl, end to end: the real CLI (its own-provider mode, offline),
a real repository, the installed `agentctl`; only the model (an OpenAI Responses API) is the
scripted fake of `fake_models`."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench, copilot_cache
from tests.agents.fake_models import Call, FakeModel, Script, Text, function_outputs, openai_server
from tests.agents.key_search import search_command

KEY = "sk-real-openai-copilot-7a6b5c4d3e"
DENIED_MARKER = "copilot-denied.txt"
CHECK = "python3 -c \"import sys; print('checked'); sys.exit(3)\""
SCRIPT = [
    [Text("Migrating refunds."), Call("view", {"path": "{cwd}/payments/refunds.py"})],
    [Call("edit", {"path": "{cwd}/payments/refunds.py",
                   "old_str": "from payments import old_feature_flag_client",
                   "new_str": "from payments import new_feature_flags"})],
    [Call("edit", {"path": "{cwd}/payments/refunds.py",
                   "old_str": 'old_feature_flag_client.is_enabled("instant_refunds")',
                   "new_str": 'new_feature_flags.evaluate("instant_refunds", context)'})],
    [Call("create", {"path": "{cwd}/.github/workflows/extra.yml", "file_text": "name: extra\n"})],
    [Call("bash", {"command": CHECK, "description": "check"})],
    [Call("bash", {"command": f"curl -s -o {DENIED_MARKER} file:///etc/hostname",
                   "description": "fetch"})],
    [Text("Refunds migrated.")],
]


def copilot_config(copilot: Path, extra: str = "") -> str:
    return (f'[agents.copilot]\ncommand = "{copilot}"\nmodel = "fake-model"\n{extra}\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            '[budget]\nmax_attempts = 1\nwall_seconds = 300\n')


def copilot_env(openai: FakeModel) -> dict[str, str]:
    """agentctl's own environment: the upstream and its real key (never the CLI's), and the
    shared package cache."""
    return {"OPENAI_BASE_URL": f"{openai.url}/v1", "OPENAI_API_KEY": KEY,
            "COPILOT_CACHE_HOME": str(copilot_cache())}


@pytest.fixture(scope="module")
def bench(payments: tuple[Path, Path], copilot_cli: Path, openai: FakeModel,
          run_agentctl: Any) -> AgentBench:
    root, repository = payments
    bench = AgentBench(root, repository, run_agentctl, copilot_env(openai))
    bench.config(copilot_config(copilot_cli))
    return bench


@pytest.fixture(scope="module")
def copilot_run(bench: AgentBench, openai: FakeModel) -> dict[str, Any]:
    openai.script = Script(SCRIPT)
    run = bench.start(bench.submit("Migrate refunds to new_feature_flags"), "copilot")
    return {"run": run, "requests": list(openai.script.requests),
            "headers": list(openai.script.headers)}


def test_each_copilot_call_is_a_recorded_tool_call_with_its_rule(
        bench: AgentBench, copilot_run: dict[str, Any]) -> None:
    calls = bench.calls(copilot_run["run"]["runId"])
    assert [(c["toolName"], c["decision"]) for c in calls] == [
        ("copilot.view", "ALLOWED"), ("copilot.edit", "ALLOWED"), ("copilot.edit", "ALLOWED"),
        ("copilot.create", "DENIED_BY_POLICY"), ("copilot.bash", "ALLOWED"),
        ("copilot.bash", "DENIED_BY_COMMAND_GUARD")], calls
    assert "from payments import old_feature_flag_client" in calls[0]["result"]["output"]


def test_the_allowed_edits_are_applied_and_attributed_to_their_steps(
        bench: AgentBench, copilot_run: dict[str, Any]) -> None:
    run_id = copilot_run["run"]["runId"]
    steps = [s for s in bench.steps(run_id) if s["toolCall"]]
    assert steps[1]["toolCall"]["toolName"] == "copilot.edit"
    assert steps[1]["changedFiles"] == [{"path": "payments/refunds.py", "changeType": "MODIFIED",
                                         "additions": 1, "deletions": 1}]
    verdict = bench.json("verdict", "show", run_id)
    assert verdict["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), verdict


def test_a_forbidden_write_is_refused_and_the_model_told_why(
        bench: AgentBench, copilot_run: dict[str, Any]) -> None:
    write = bench.calls(copilot_run["run"]["runId"])[3]
    assert write["matchedRule"] == "forbidden: .github/**"
    assert json.loads(write["argumentsJson"])["paths"] == [".github/workflows/extra.yml"]
    assert write["result"] is None
    assert not (bench.repo / ".github" / "workflows" / "extra.yml").exists()
    told = " ".join(function_outputs(copilot_run["requests"][4]))
    assert "forbidden: .github/**" in told, told


def test_an_allowed_shell_call_runs_in_its_jail_and_its_result_is_recorded(
        bench: AgentBench, copilot_run: dict[str, Any]) -> None:
    shell = bench.calls(copilot_run["run"]["runId"])[4]
    assert shell["matchedRule"] == "allow: python3 *"
    # recorded from the hook as the model asked it, not as the stub it was rewritten to
    assert json.loads(shell["argumentsJson"])["command"] == CHECK
    assert shell["result"]["exitCode"] == 3 and "checked" in shell["result"]["output"]
    told = " ".join(function_outputs(copilot_run["requests"][5]))
    assert "checked" in told and "exit code 3" in told, told


def test_a_denied_shell_call_never_runs_and_is_denied_with_its_rule(
        bench: AgentBench, copilot_run: dict[str, Any]) -> None:
    curl = bench.calls(copilot_run["run"]["runId"])[5]
    assert curl["matchedRule"] == "deny: curl *" and curl["result"] is None
    told = " ".join(function_outputs(copilot_run["requests"][6]))
    assert "deny: curl *" in told, told
    patch = [a for a in bench.json("artifact", "list", copilot_run["run"]["runId"])
             if a["name"] == "touched-files.json"]
    touched = json.loads(bench.cli("artifact", "show", patch[0]["artifactId"]).stdout)
    assert [f["path"] for f in touched["files"]] == ["payments/refunds.py"]


def test_the_model_is_reached_through_the_gateway_with_the_real_key_only_there(
        bench: AgentBench, copilot_run: dict[str, Any]) -> None:
    headers = copilot_run["headers"]
    assert len(headers) == 7 and all(h.get("authorization") == f"Bearer {KEY}"
                                     for h in headers), headers
    run_id = copilot_run["run"]["runId"]
    cost = json.loads(bench.cli("artifact", "show", next(
        a for a in bench.json("artifact", "list", run_id)
        if a["type"] == "COST_REPORT")["artifactId"]).stdout)
    assert cost["agent"] == "copilot" and cost["source"] == "gateway"
    assert cost["modelRequests"] == 7 and cost["inputTokens"] == 7 * 1200
    assert cost["claimsAgree"] is True, cost


def test_copilot_searching_its_jail_finds_no_key(bench: AgentBench, openai: FakeModel) -> None:
    openai.script = Script([[Call("bash", {"command": search_command(KEY),
                                           "description": "look for the key"})],
                            [Text("done")]])
    bench.start(bench.submit("Look for the API key"), "copilot")
    told = " ".join(function_outputs(openai.script.requests[-1]))
    assert "KEY-HITS [] PLACEHOLDER False" in told, told
    assert int(told.rsplit("FILES", 1)[1].split()[0]) > 10


# Run by a shell call of an unsandboxed Copilot: the environment of each ancestor up to
# agentctl's guardian (Copilot, its npm loader, the guardian: the CLI's process tree), and the
# files of the CLI's private home.
ANCESTORS = r"""
import os, sys
key, hits, placeholder, chain, pid = sys.argv[1][::-1].encode(), [], False, 0, os.getppid()
while pid > 1:
    data = open(f"/proc/{pid}/environ", "rb").read()
    placeholder = placeholder or b"agentctl-gateway-" in data
    hits += [f"environ:{pid}"] if key in data else []
    chain += 1
    if b"guardian\x00--\x00" in open(f"/proc/{pid}/cmdline", "rb").read():
        break
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
for folder, _, names in os.walk(os.environ["HOME"]):
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isfile(path) and key in open(path, "rb").read():
            hits.append(path)
print("CHAIN", chain, "HITS", hits, "PLACEHOLDER", placeholder)
"""


def test_copilot_unsandboxed_holds_only_the_placeholder(bench: AgentBench,
                                                        openai: FakeModel) -> None:
    """Without agentctl's sandbox a shell call is Copilot's own child: the CLI's process tree
    and its home hold the gateway's placeholder, never the key."""
    command = shlex.join(["python3", "-c", ANCESTORS, KEY[::-1]])
    openai.script = Script([[Call("bash", {"command": command, "description": "key?"})],
                            [Text("done")]])
    bench.start(bench.submit("Look for the API key"), "copilot", "--no-sandbox")
    told = " ".join(function_outputs(openai.script.requests[-1]))
    assert "HITS [] PLACEHOLDER True" in told, told
    assert int(told.split("CHAIN", 1)[1].split()[0]) >= 3, told


@pytest.mark.parametrize("spec", ["copilot:", "copilot:two words"])
def test_a_malformed_copilot_spec_is_one_line_and_exit_2(bench: AgentBench, spec: str) -> None:
    result = bench.cli("run", "start", "task_none", "--agent", spec, expect=(2,))
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "copilot:MODEL" in result.stderr


def test_a_copilot_run_replayed_with_the_model_stopped_is_identical(
        payments: tuple[Path, Path], copilot_cli: Path, run_agentctl: Any) -> None:
    """Copilot writes the clock into every user message (`<current_datetime>`): not what a
    replay compares."""
    root, repository = payments
    model = openai_server()
    bench = AgentBench(root, repository, run_agentctl, copilot_env(model))
    bench.config(copilot_config(copilot_cli))
    model.script = Script([[Call("bash", {"command": "ls payments", "description": "list"})],
                           [Text("done")]])
    try:
        run = bench.start(bench.submit("List the payments package"), "copilot")
    finally:
        model.close()
    report = bench.cli("run", "replay", run["runId"], "--json").json()
    assert report["identical"] is True, report["differences"]
    assert report["requestsReplayed"] == report["requestsRecorded"] == 2
    assert [c["toolName"] for c in bench.calls(report["runId"])] == \
        [c["toolName"] for c in bench.calls(run["runId"])] == ["copilot.bash"]


def test_copilot_past_its_turn_limit_is_denied_and_could_not_complete(
        bench: AgentBench, copilot_cli: Path, openai: FakeModel) -> None:
    """Copilot has no turn limit of its own: agentctl denies its calls past max_turns."""
    bench.config(copilot_config(copilot_cli, "max_turns = 1\n"))
    openai.script = Script([[Call("bash", {"command": "echo one", "description": "one"})],
                            [Call("bash", {"command": "echo two", "description": "two"})],
                            [Text("done")]])
    try:
        run = bench.start(bench.submit("Two calls"), "copilot")
    finally:
        bench.config(copilot_config(copilot_cli))
    calls = bench.calls(run["runId"])
    assert [json.loads(c["argumentsJson"])["command"] for c in calls] == ["echo one"]
    told = " ".join(function_outputs(openai.script.requests[2]))
    assert "turn limit (1)" in told, told
    verdict = bench.json("verdict", "show", run["runId"])
    assert any("turn limit (max_turns)" in reason for reason in verdict["reasons"]), verdict


def test_doctor_names_copilot_s_version_and_whether_agentctl_is_tested_with_it(
        copilot_cli: Path, run_agentctl: Any, tmp_path: Path) -> None:
    other = tmp_path / "other-bin"
    other.mkdir()
    (other / "copilot").write_text("#!/bin/sh\necho 'GitHub Copilot CLI 9.9.9.'\n")
    (other / "copilot").chmod(0o755)
    details = {}
    for name, folder in (("pinned", copilot_cli.parent), ("other", other)):
        done = run_agentctl("doctor", "--json", home=tmp_path / "home", cwd=tmp_path,
                            env={"PATH": f"{folder}:{os.environ['PATH']}"})
        details[name] = {f["part"]: f for f in json.loads(done.stdout)}["copilot"]["detail"]
    assert details["pinned"].endswith(" 1.0.102, tested by agentctl")
    assert details["other"].endswith(" 9.9.9, not tested by agentctl (tested: 1.0.102)")


READ_KEY = ("python3 -c \"import os, sys\nfor p in sys.argv[1:]:\n try: print('READ', p, "
            "open(os.path.expanduser(p)).read())\n except OSError as e: print('UNREADABLE', p, "
            "e.errno)\" ~/.copilot/hooks/agentctl.json "
            "{cwd}/../agent-home/.copilot/hooks/agentctl.json")


def test_no_tool_of_copilot_can_read_the_hook_key(bench: AgentBench, openai: FakeModel) -> None:
    """The hooks' key is in the CLI's private hook file: its file tools are refused outside
    the workspace, and a shell call runs in a jail without the CLI's home."""
    openai.script = Script([
        [Call("view", {"path": "{cwd}/../agent-home/.copilot/hooks/agentctl.json"})],
        [Call("view", {"path": "~/.copilot/hooks/agentctl.json"})],
        [Call("bash", {"command": READ_KEY, "description": "read the hook key"})],
        [Text("done")]])
    run = bench.start(bench.submit("Read the hook key"), "copilot")
    calls = bench.calls(run["runId"])
    views = [c for c in calls if c["toolName"] == "copilot.view"]
    assert [c["decision"] for c in views] == ["DENIED_BY_PATH_GUARD"] * 2, views
    (shell,) = [c for c in calls if c["toolName"] == "copilot.bash"]
    assert shell["decision"] == "ALLOWED"
    output = shell["result"]["output"]
    assert output.count("UNREADABLE") == 2 and "READ " not in output, output
    told = json.dumps(openai.script.requests[-1])
    assert "--key" not in told and "--key" not in json.dumps(bench.tree(run["runId"]))


# Sleeps past Copilot's shortest `initial_wait` (30 s, whatever smaller value the model asks),
# then writes a file: returned at its initial_wait, the call would end on record with the
# command still running, and the file would come from no call under way.
LATE_MARKER = "late-marker.txt"
OUTLIVES_ITS_WAIT = ("python3 -c \"import time; print('start', flush=True); time.sleep(32); "
                     f"open('{LATE_MARKER}', 'w').write('late'); print('end')\"")


def test_a_command_outliving_the_models_initial_wait_ends_within_its_recorded_call(
        bench: AgentBench, openai: FakeModel) -> None:
    """The model asks a sync call to wait 2 s for a command that takes 32 s: the call routed
    into its jail waits as long as the jail may run, so the command ends within its recorded
    call (exit code and whole output on record, the marker its step's change), never after."""
    openai.script = Script([[Call("bash", {"command": OUTLIVES_ITS_WAIT, "mode": "sync",
                                           "initial_wait": 2, "description": "slow"})],
                            [Text("done")]])
    run = bench.start(bench.submit("Write the late marker"), "copilot")
    (call,) = bench.calls(run["runId"])
    assert json.loads(call["argumentsJson"])["initial_wait"] == 2  # as the model asked it
    assert call["result"]["exitCode"] == 0, call["result"]
    assert call["result"]["output"] == "start\nend", call["result"]
    told = " ".join(function_outputs(openai.script.requests[-1]))
    assert "completed with exit code 0" in told and "still running" not in told, told
    (step,) = [s for s in bench.steps(run["runId"])
               if (s["toolCall"] or {}).get("toolName") == "copilot.bash"]
    assert [f["path"] for f in step["changedFiles"]] == [LATE_MARKER], step
    verdict = bench.json("verdict", "show", run["runId"])
    assert verdict["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), verdict
