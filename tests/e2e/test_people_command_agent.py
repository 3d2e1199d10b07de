"""Plugging in an external coding agent: `--agent command:CMD` runs it in the workspace with the
instruction, the workspace and a task file, a scrubbed environment plus the passthrough names,
keeps its output as a transcript, its `agentctl-cost.json` as a cost report, and takes the patch
from what it left in the workspace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.people_support import (
    API_KEY,
    process_gone,
    stored_text,
    submit_and_run,
    tool_calls,
)
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench, in_parallel

# Quotes, `;`, `$(...)` and backticks: a placeholder that is not shell-quoted would run them.
INSTRUCTION = 'document add; don\'t "break" it $(touch injected) `touch injected2`'
UNLISTED = "unlisted-" + "s3cr3t-value-42"
AGENT = '''\
import json, os, pathlib, sys

task_file, workspace, instruction, report = sys.argv[1:5]
pathlib.Path(report).write_text(json.dumps({
    "argv": sys.argv[1:4], "cwd": os.getcwd(), "env": sorted(os.environ),
    "task": json.loads(pathlib.Path(task_file).read_text())}))
key = os.environ.get("MY_API_KEY", "")
print("calling the model with key " + key)
print("retrying with " + key, file=sys.stderr)
root = pathlib.Path(workspace)
init = root / "calc" / "__init__.py"
init.write_text(init.read_text().replace(
    "def add(a, b):\\n", 'def add(a, b):\\n    """The sum of a and b."""\\n'))
(root / "calc" / "mul.py").write_text("def mul(a, b):\\n    return a * b\\n")
(root / "agentctl-cost.json").write_text(json.dumps(
    {"inputTokens": 1200, "outputTokens": 340, "usd": 0.0123, "apiKey": key}))
'''
SLOW_AGENT = '''\
echo "TIMEOUT = 1" > calc/slow.py
sleep 30 &
echo $! > "$1"
sleep 30
'''
EDIT_ONLY = "printf 'def add(a, b):\\n    return b + a\\n' > calc/__init__.py\n"


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl
           ) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("people-agent")
    bench = Bench(root, run_agentctl)
    # Unsandboxed: the agents report what they saw, and their host pids, to files outside the
    # workspace (tests/pipeline/test_sandbox.py runs a command agent sandboxed).
    bench.config('[sandbox]\nmode = "off"\n[env]\npassthrough = ["MY_API_KEY"]\n')
    slow_config = bench.config('[sandbox]\nmode = "off"\n[budget]\nwall_seconds = 2\n',
                               name="slow.toml")
    (root / "agent.py").write_text(AGENT)
    (root / "slow.sh").write_text(SLOW_AGENT)
    (root / "edit.sh").write_text(EDIT_ONLY)
    report, child = root / "agent-report.json", root / "slow-child.pid"
    repo = repo_maker(root / "calc", CALC_FILES)
    tracked = repo_maker(root / "tracked", {
        **CALC_FILES, "agentctl-cost.json": '{"monthlyBudgetUsd": 50}\n'})
    env = {"MY_API_KEY": API_KEY, "UNLISTED_TOKEN": UNLISTED}

    def external() -> dict[str, Any]:
        return submit_and_run(
            bench, repo, "--autonomy", "supervised_pr", "--verify", UNITTEST,
            agent=f"command:python3 {root / 'agent.py'} {{task_file}} {{workspace}} "
                  f"{{instruction}} {report}", instruction=INSTRUCTION, env=env)

    def slow() -> dict[str, Any]:
        return submit_and_run(bench, repo, agent=f"command:sh {root / 'slow.sh'} {child}",
                              instruction="take forever", config=slow_config)

    def tracked_cost() -> dict[str, Any]:
        return submit_and_run(bench, tracked, agent=f"command:sh {root / 'edit.sh'}",
                              instruction="swap the operands")

    runs = dict(zip(["external", "slow", "tracked"],
                    in_parallel(lambda play: play(), [external, slow, tracked_cost]),
                    strict=True))
    tracked_id = runs["tracked"]["runId"]  # a run that kept no patch says why, up front
    assert "patch.diff" in [a["name"] for a in bench.artifacts(tracked_id)], \
        bench.cli("run", "show", tracked_id, "--tree").stdout
    run_id = runs["external"]["runId"]
    listed = bench.artifacts(run_id)
    return {
        "bench": bench, "runs": runs, "artifacts": listed,
        "contents": {a["name"]: (bench.home / a["uri"]).read_text() for a in listed},
        "tree": bench.tree(run_id), "events": bench.events(run_id),
        "report": json.loads(report.read_text()), "child": int(child.read_text()),
        "trackedPatch": stored_text(bench, bench.artifacts(runs["tracked"]["runId"]),
                                    "patch.diff"),
    }


def test_an_external_agents_edits_become_the_runs_patch(agents: dict[str, Any]) -> None:
    run = agents["runs"]["external"]
    assert run["status"] == "NEEDS_APPROVAL", run["verdict"]
    assert run["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW")
    patch = agents["contents"]["patch.diff"]
    assert "+++ b/calc/mul.py" in patch and "The sum of a and b" in patch


def test_the_agent_runs_in_the_workspace_with_the_instruction_and_a_task_file(
        agents: dict[str, Any]) -> None:
    report = agents["report"]
    task_file, workspace, instruction = report["argv"]
    assert report["cwd"] == workspace
    assert instruction == INSTRUCTION
    assert report["task"]["instruction"] == INSTRUCTION
    spec = report["task"]["executionSpec"]
    assert spec["baseCommit"] == agents["runs"]["external"]["baseCommit"]
    assert Path(task_file).name.endswith(".json")


def test_shell_metacharacters_in_the_instruction_are_not_run(agents: dict[str, Any]) -> None:
    assert "injected" not in agents["contents"]["patch.diff"]


def test_the_agent_sees_passthrough_variables_and_nothing_unlisted(
        agents: dict[str, Any]) -> None:
    env = agents["report"]["env"]
    assert "MY_API_KEY" in env
    assert "UNLISTED_TOKEN" not in env


def test_the_agent_is_one_allowed_agent_exec_tool_call(agents: dict[str, Any]) -> None:
    [call] = tool_calls(agents["tree"])
    assert (call["toolName"], call["decision"]) == ("agent.exec", "ALLOWED")
    assert call["result"]["exitCode"] == 0
    assert "calling the model with key [REDACTED" in call["result"]["output"]


def test_the_agents_output_is_kept_as_a_transcript_artifact(agents: dict[str, Any]) -> None:
    [transcript] = [a for a in agents["artifacts"] if a["type"] == "MODEL_TRANSCRIPT_SUMMARY"]
    assert transcript["name"] == "agent-transcript.log"
    assert transcript["visibility"] != "SAFE_FOR_PR"
    text = agents["contents"]["agent-transcript.log"]
    assert "calling the model with key" in text and "retrying with" in text


def test_the_agents_cost_file_becomes_a_cost_report(agents: dict[str, Any]) -> None:
    [cost] = [a for a in agents["artifacts"] if a["type"] == "COST_REPORT"]
    assert cost["name"] == "agentctl-cost.json"
    report = json.loads(agents["contents"]["agentctl-cost.json"])
    assert (report["inputTokens"], report["outputTokens"], report["usd"]) == (1200, 340, 0.0123)
    assert report["apiKey"].startswith("[REDACTED")


def test_the_agents_cost_file_is_not_part_of_the_patch(agents: dict[str, Any]) -> None:
    assert "agentctl-cost.json" not in agents["contents"]["patch.diff"]
    assert "agentctl-cost.json" not in agents["contents"]["touched-files.json"]


def test_a_passthrough_secret_the_agent_printed_is_in_no_stored_file(
        agents: dict[str, Any]) -> None:
    home: Path = agents["bench"].home
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name.startswith("agentctl.db") for p in files)
    assert [str(p) for p in files if API_KEY.encode() in p.read_bytes()] == []


def test_a_passthrough_secret_the_agent_printed_is_in_no_record_shown(
        agents: dict[str, Any]) -> None:
    shown = json.dumps([agents["tree"], agents["events"], agents["artifacts"]])
    assert API_KEY not in shown and UNLISTED not in shown


def test_an_agent_running_past_the_wall_clock_budget_is_stopped(agents: dict[str, Any]) -> None:
    slow = agents["runs"]["slow"]
    assert slow["exitCode"] == 1
    assert slow["verdict"]["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert any("timed out" in reason and "budget of 2 s" in reason
               for reason in slow["verdict"]["reasons"])


def test_nothing_the_stopped_agent_started_is_left_running(agents: dict[str, Any]) -> None:
    assert process_gone(agents["child"])


def test_a_cost_file_the_repository_tracks_is_left_alone(agents: dict[str, Any]) -> None:
    tracked = agents["runs"]["tracked"]
    assert tracked["exitCode"] == 0, tracked["verdict"]
    assert "calc/__init__.py" in agents["trackedPatch"]
    assert "agentctl-cost.json" not in agents["trackedPatch"]
