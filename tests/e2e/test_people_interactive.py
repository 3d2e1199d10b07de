"""A person at the terminal answers for `ask` tool calls (`pip install *`, `npm install *`,
`rm -rf *`): `run start --interactive` asks on a pseudo-terminal; without it the call is recorded
as REQUIRES_APPROVAL and never executed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.people_support import TerminalSession, at_terminal, stored_text, tool_calls
from tests.e2e.runs_support import CALC_FILES, Bench, in_parallel, tool_steps

FILES = {**CALC_FILES, "old/junk.txt": "left over\n"}
DOCSTRING = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
             "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}
ASKS = ["pip install requests", "npm install left-pad", "rm -rf old"]


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl,
          agentctl_executable: str) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("people-interactive")
    bench = Bench(root, run_agentctl)
    repo = repo_maker(root / "calc", FILES)
    prompted = bench.plan("prompted.toml", {"tool": "shell.run", "command": "rm -rf old"},
                          DOCSTRING)
    unattended = bench.plan("unattended.toml",
                            *({"tool": "shell.run", "command": c} for c in ASKS), DOCSTRING)
    terminal_env = {**os.environ, "AGENTCTL_HOME": str(bench.home), "AGENTCTL_USER": "carol",
                    "TERM": "xterm-256color"}
    terminal_env.pop("AGENTCTL_CONFIG", None)

    def at_the_terminal(answer: str) -> dict[str, Any]:
        task = bench.submit(repo, "--autonomy", "supervised_pr", instruction="drop old/")
        session = at_terminal(
            [agentctl_executable, "run", "start", task, "--agent", f"script:{prompted}",
             "--interactive", "--json"],
            env=terminal_env, cwd=bench.cwd, answer=answer, pause=0.6 if answer == "y" else 0)
        return {"session": session, "run": json.loads(session.stdout) if session.stdout else {}}

    def without_terminal() -> dict[str, Any]:
        task = bench.submit(repo, "--autonomy", "supervised_pr", instruction="drop old/")
        result = bench.cli("run", "start", task, "--agent", f"script:{prompted}",
                           "--interactive", "--json", expect=None, input="")
        return {"result": result, "runs": bench.json("run", "list", "--task", task)}

    def unattended_run() -> dict[str, Any]:
        task = bench.submit(repo, "--autonomy", "supervised_pr", instruction="set things up")
        return {"run": bench.start(task, f"script:{unattended}")}

    plays: dict[str, Callable[[], dict[str, Any]]] = {
        "yes": lambda: at_the_terminal("y"), "no": lambda: at_the_terminal("n"),
        "no-terminal": without_terminal, "unattended": unattended_run}
    results = dict(zip(plays, in_parallel(lambda play: play(), list(plays.values()), workers=4),
                       strict=True))
    for name in ("yes", "no", "unattended"):
        run_id = results[name]["run"]["runId"]
        results[name]["tree"] = bench.tree(run_id)
        results[name]["patch"] = stored_text(bench, bench.artifacts(run_id), "patch.diff")
        results[name]["events"] = bench.events(run_id)
    return results


def session(asked: dict[str, Any], name: str) -> TerminalSession:
    return asked[name]["session"]  # type: ignore[no-any-return]


def only_call(asked: dict[str, Any], name: str, command: str) -> dict[str, Any]:
    calls = [c for c in tool_calls(asked[name]["tree"])
             if json.loads(c["argumentsJson"]).get("command") == command]
    assert len(calls) == 1, tool_calls(asked[name]["tree"])
    return calls[0]


@pytest.mark.parametrize("answer", ["yes", "no"])
def test_the_prompt_names_the_command_and_the_rule_that_asks(
        asked: dict[str, Any], answer: str) -> None:
    seen = session(asked, answer)
    assert seen.prompts == 1, seen.screen
    assert "rm -rf old" in seen.screen and "ask: rm -rf *" in seen.screen


@pytest.mark.parametrize("answer", ["yes", "no"])
def test_the_prompt_names_the_run_and_the_call_s_step_in_its_tree(
        asked: dict[str, Any], answer: str) -> None:
    call = only_call(asked, answer, "rm -rf old")
    [step] = [s for s in tool_steps(asked[answer]["tree"]) if s["toolCall"] == call]
    run_id = asked[answer]["run"]["runId"]
    assert f"run {run_id} · step {step['sequenceNumber']}" in session(asked, answer).screen


@pytest.mark.parametrize("answer", ["yes", "no"])
def test_the_prompt_goes_to_the_terminal_and_stdout_keeps_the_json(
        asked: dict[str, Any], answer: str) -> None:
    seen = session(asked, answer)
    assert "Allow this call?" not in seen.stdout
    assert asked[answer]["run"]["runId"].startswith("run_")


def test_answering_yes_runs_the_command_and_records_who_approved_it(
        asked: dict[str, Any]) -> None:
    call = only_call(asked, "yes", "rm -rf old")
    assert call["decision"] == "ALLOWED"
    assert call["approvedBy"] == "carol"
    assert call["matchedRule"] == "ask: rm -rf *"
    assert call["result"]["exitCode"] == 0
    assert "deleted file mode" in asked["yes"]["patch"] and "old/junk.txt" in asked["yes"]["patch"]


def test_answering_yes_lets_the_run_finish_awaiting_approval(asked: dict[str, Any]) -> None:
    assert session(asked, "yes").exit_code == 0
    assert asked["yes"]["run"]["status"] == "NEEDS_APPROVAL"


def test_answering_no_records_requires_approval_and_never_runs_the_command(
        asked: dict[str, Any]) -> None:
    call = only_call(asked, "no", "rm -rf old")
    assert call["decision"] == "REQUIRES_APPROVAL"
    assert call["approvedBy"] is None
    assert call["result"] is None
    assert call["denialReason"]
    assert "old/junk.txt" not in asked["no"]["patch"]
    assert "calc/__init__.py" in asked["no"]["patch"]  # the rest of the plan went on
    denied = [e for e in asked["no"]["events"] if e["type"] == "ToolCallDenied"]
    assert [e["payload"]["toolCallId"] for e in denied] == [call["toolCallId"]]


@pytest.mark.parametrize("command", ASKS)
def test_without_interactive_an_ask_call_is_recorded_and_not_executed(
        asked: dict[str, Any], command: str) -> None:
    call = only_call(asked, "unattended", command)
    assert call["decision"] == "REQUIRES_APPROVAL"
    assert call["matchedRule"] == f"ask: {' '.join(command.split()[:2])} *"
    assert call["result"] is None and call["approvedBy"] is None
    assert command in call["denialReason"]
    assert "old/junk.txt" not in asked["unattended"]["patch"]


def test_interactive_without_a_terminal_is_refused_before_a_run_exists(
        asked: dict[str, Any], error_line: Callable[[str], str]) -> None:
    result = asked["no-terminal"]["result"]
    assert result.returncode == 2
    assert "terminal" in error_line(result.stderr)
    assert result.stdout == ""
    assert asked["no-terminal"]["runs"] == []


def test_the_live_status_stays_quiet_while_the_prompt_waits_for_an_answer(
        asked: dict[str, Any]) -> None:
    waiting = session(asked, "yes").before_answer
    assert "Allow this call?" in waiting
    assert "run run_" not in waiting, repr(waiting)
