"""The enforcement canary, end to end with the real CLIs: the run's model gateway forwards
nothing until agentctl's guard proved itself loaded in the CLI's process (its session-start
hook reached the attempt). A run whose hooks are switched off by the operator's own launch
settings is refused at its first model request: the vendor sees nothing, no tool call runs
unguarded, and the run ends FAILED_INFRASTRUCTURE "the agent's guard did not load"."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentctl.domain.model_routes import GUARD_RULE
from agentctl.execution.agents import AttemptIdentity
from agentctl.execution.agents.channel import hook_command
from agentctl.execution.agents.claude import HOOK_EVENTS, QUIET
from agentctl.execution.agents.hook_socket import BridgeServer, Credentials, Source
from agentctl.services.admin.demo import prepare
from tests.agents.conftest import CLAUDE, CLAUDE_NEWEST, AgentBench, claude_config, install_cli
from tests.agents.fake_models import (
    Call,
    FakeModel,
    Script,
    Text,
    tool_results,
)
from tests.agents.test_claude import MIGRATION
from tests.agents.test_codex import SCRIPT, codex_config

NOT_LOADED = "the agent's guard did not load"
# Claude Code: a second `--settings` with disableAllHooks switches off every hook, agentctl's
# too (`--setting-sources ""` does not: agentctl's --settings file is not a setting source).
CLAUDE_HOOKS_OFF = 'extra_args = ["--settings", "{\\"disableAllHooks\\": true}"]\n'
# Codex: its `hooks` feature off
CODEX_HOOKS_OFF = ["--disable", "hooks"]
# A run whose guard never arms waits this long at its first model request (10 s by default)
SHORT_HOLD = "\n[gateway]\nguard_hold_seconds = 0.5\n"


def _bench(tmp_path_factory: pytest.TempPathFactory, run_agentctl: Any,
           env: dict[str, str]) -> AgentBench:
    root = tmp_path_factory.mktemp("canary")
    repository, _plans, _settings = prepare(root)
    return AgentBench(root, repository, run_agentctl, env)


@pytest.fixture(scope="module")
def claude_bench(tmp_path_factory: pytest.TempPathFactory, run_agentctl: Any,
                 anthropic: FakeModel) -> AgentBench:
    return _bench(tmp_path_factory, run_agentctl, {
        "ANTHROPIC_BASE_URL": anthropic.url, "ANTHROPIC_API_KEY": "sk-ant-fake-key-0123456789"})


@pytest.fixture(scope="module")
def codex_bench(tmp_path_factory: pytest.TempPathFactory, run_agentctl: Any) -> AgentBench:
    return _bench(tmp_path_factory, run_agentctl, {"FAKE_API_KEY": "sk-fake-openai-0123456789"})


def _run(bench: AgentBench, model: FakeModel, script: list[Any], agent: str,
         hold: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    model.script = Script(script, hold=hold)
    model.seen.clear()
    run = bench.start(bench.submit("Migrate old_feature_flag_client to new_feature_flags"), agent)
    return {"run": run, "seen": list(model.seen), "show": bench.json("run", "show", run["runId"])}


def _assert_refused(bench: AgentBench, refused: dict[str, Any]) -> None:
    run_id = refused["run"]["runId"]
    # nothing reached the vendor, so the CLI could make no tool call, guarded or not
    assert refused["seen"] == []
    assert bench.calls(run_id) == []
    show = refused["show"]
    assert show["status"] == "FAILED", show
    verdict = bench.json("verdict", "show", run_id)
    assert verdict["status"] == "FAILED_INFRASTRUCTURE"
    assert verdict["reasons"][0].startswith(NOT_LOADED), verdict["reasons"]
    # the request the gateway refused is on record with the canary's rule
    requests = bench.refused_model_requests(run_id)
    guarded = [call for call in requests if call["matchedRule"] == GUARD_RULE]
    assert guarded, requests
    assert all(call["decision"] == "DENIED_BY_POLICY" for call in guarded)
    assert NOT_LOADED in guarded[0]["denialReason"], guarded[0]
    shown = bench.cli("run", "show", run_id).stdout
    assert "verdict    FAILED_INFRASTRUCTURE" in shown and f"reason     {NOT_LOADED}" in shown
    assert refused["run"]["exitCode"] == 1
    assert refused["run"]["executionSpec"]["budget"]["guardHoldSeconds"] == 0.5


def _assert_guarded(bench: AgentBench, normal: dict[str, Any]) -> None:
    run_id = normal["run"]["runId"]
    verdict = bench.json("verdict", "show", run_id)
    assert verdict["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), verdict
    assert [s for s in normal["seen"] if s[0] == "POST"], normal["seen"]
    calls = bench.calls(run_id)
    assert calls and any(call["decision"] == "ALLOWED" for call in calls), calls
    assert not [call for call in bench.refused_model_requests(run_id)
                if call["matchedRule"] == GUARD_RULE]


# --- Claude Code, the pinned release and the newest ---------------------------------------------
@pytest.fixture(scope="module", params=[CLAUDE, CLAUDE_NEWEST], ids=lambda release: release[1])
def claude_release(request: pytest.FixtureRequest) -> Path:
    return install_cli(*request.param)


@pytest.fixture(scope="module")
def claude_runs(claude_bench: AgentBench, claude_release: Path,
                anthropic: FakeModel) -> dict[str, dict[str, Any]]:
    claude_cli = claude_release
    claude_bench.config(claude_config(claude_cli))
    normal = _run(claude_bench, anthropic, MIGRATION, "claude")
    claude_bench.config(claude_config(claude_cli).replace(
        "max_turns = 30\n", f"max_turns = 30\n{CLAUDE_HOOKS_OFF}") + SHORT_HOLD)
    refused = _run(claude_bench, anthropic, MIGRATION, "claude")
    return {"normal": normal, "refused": refused}


def test_claude_with_its_hooks_switched_off_is_refused_before_its_model_is_reached(
        claude_bench: AgentBench, claude_runs: dict[str, dict[str, Any]]) -> None:
    _assert_refused(claude_bench, claude_runs["refused"])


def test_claude_with_agentctls_hooks_reaches_its_model_and_runs_guarded(
        claude_bench: AgentBench, claude_runs: dict[str, dict[str, Any]]) -> None:
    _assert_guarded(claude_bench, claude_runs["normal"])


# --- Codex --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def codex_runs(codex_bench: AgentBench, codex_cli: Path,
               openai: FakeModel) -> dict[str, dict[str, Any]]:
    config = codex_config(codex_cli, openai.url)
    codex_bench.config(config)
    normal = _run(codex_bench, openai, SCRIPT, "codex")
    off = json.dumps(CODEX_HOOKS_OFF)[1:-1]
    codex_bench.config(config.replace("extra_args = [", f"extra_args = [{off}, ") + SHORT_HOLD)
    refused = _run(codex_bench, openai, SCRIPT, "codex")
    return {"normal": normal, "refused": refused}


def test_codex_with_its_hooks_switched_off_is_refused_before_its_model_is_reached(
        codex_bench: AgentBench, codex_runs: dict[str, dict[str, Any]]) -> None:
    _assert_refused(codex_bench, codex_runs["refused"])


def test_codex_with_agentctls_hooks_reaches_its_model_and_runs_guarded(
        codex_bench: AgentBench, codex_runs: dict[str, dict[str, Any]]) -> None:
    _assert_guarded(codex_bench, codex_runs["normal"])


# --- a skill's shell command (Claude Code after 2.1.240: PreSkillShellCommand) ------------------
SKILL = """---
name: probe
description: a skill whose text runs a shell command when it loads
---
The marker: !`printf '%s-%s' SKILL RAN`
"""


@pytest.mark.parametrize("decision", ["deny", "allow"])
def test_the_newest_claude_code_asks_agentctls_hook_before_a_skills_shell_command(
        anthropic: FakeModel, tmp_path: Path, decision: str) -> None:
    """A skill's text may embed a shell command, which is no tool call (no PreToolUse). The
    newest Claude Code, configured with agentctl's hook events and hook command, asks the
    attempt about it (PreSkillShellCommand) and obeys: denied, it never runs. (In a run the
    Skill tool itself is denied, as a tool agentctl cannot check: this is the layer under it.)"""
    home, work = tmp_path / "home", tmp_path / "work"
    skill = home / ".claude" / "skills" / "probe"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    work.mkdir()
    keys = Credentials()
    reached: list[dict[str, object]] = []

    def answer(message: dict[str, object], source: Source) -> dict[str, object]:
        reached.append(message)
        if message.get("event") == "PreSkillShellCommand":
            return {"decision": decision, "reason": f"{decision} by the test"}
        return {"decision": "allow", "reason": "ok"} if message.get("event") == "PreToolUse" \
            else {"ok": True}

    server = BridgeServer(AttemptIdentity(tmp_path, "attempt_S"), answer, keys)
    done = threading.Event()
    serving = threading.Thread(target=lambda: [server.serve(0.05) for _ in iter(done.is_set,
                                                                                 True)])
    serving.start()
    hook = hook_command("claude", AttemptIdentity(tmp_path, "attempt_S"), keys.hook)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {event: [{"matcher": "*", "hooks": [
        {"type": "command", "command": hook, "timeout": 60}]}] for event in HOOK_EVENTS}}))
    anthropic.script = Script([[Call("Skill", {"skill": "probe"})], [Text("Loaded.")]])
    try:
        subprocess.run([str(install_cli(*CLAUDE_NEWEST)), "-p", "load the probe skill",
                        "--output-format", "stream-json", "--verbose", "--settings",
                        str(settings), "--setting-sources", "user", "--max-turns", "3"],
                       cwd=work, capture_output=True, text=True, timeout=180, check=False,
                       env={**os.environ, **QUIET, "HOME": str(home),
                            "ANTHROPIC_BASE_URL": anthropic.url,
                            "ANTHROPIC_API_KEY": "sk-ant-fake-key-0123456789"})
    finally:
        done.set()
        serving.join()
        server.close()
    [asked] = [message for message in reached if message["event"] == "PreSkillShellCommand"]
    payload = asked["input"]
    assert isinstance(payload, dict) and payload["tool_name"] == "Bash"
    assert payload["tool_input"]["command"] == "printf '%s-%s' SKILL RAN"
    ran = "SKILL-RAN" in json.dumps(anthropic.script.requests)  # its output reached the model
    assert ran is (decision == "allow")


# --- an effect no hook saw ends the attempt ------------------------------------------------------
# A process the agent's command leaves behind (unsandboxed: no tool jail ends it with its call)
# writes a file a second later, while no call of the agent's is under way; then it says so in a
# file outside the workspace (a view mounted where only agentctl's processes see it).
def left_behind(said: Path) -> list[list[Call | Text]]:
    late = (f"import time; time.sleep(1); open('late.txt', 'w').write('late'); "
            f"open({str(said)!r}, 'w').write('written')")
    leave_behind = shlex.join(["python3", "-c", (
        f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {late!r}], "
        "start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL)")])
    return [
        [Call("Bash", {"command": leave_behind, "description": "start a writer and return"})],
        [Call("Write", {"file_path": "{cwd}/payments/notes.txt", "content": "notes\n"})],
        [Text("done")],
    ]


def test_a_file_no_recorded_call_made_ends_the_attempt_naming_it(
        claude_bench: AgentBench, anthropic: FakeModel) -> None:
    """A file changes while no call of the agent's is under way (here a process its command
    left running, in an unsandboxed run; as well a tool whose hook did not fire): the agent's
    next call finds it and is denied, and the attempt ends FAILED_INFRASTRUCTURE naming the
    file. A record that misses what made a change is never judged."""
    claude_bench.config(claude_config(install_cli(*CLAUDE)) + '\n[sandbox]\nmode = "off"\n')
    said = claude_bench.root / "late-written"
    said.unlink(missing_ok=True)
    held: list[bool] = []

    def hold(body: dict[str, Any]) -> None:
        """The answer after the first call's result waits for the late write."""
        if tool_results(body) and not held:
            deadline = time.monotonic() + 60
            while not said.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            held.append(said.exists())

    left = _run(claude_bench, anthropic, left_behind(said), "claude", hold=hold)
    run_id = left["run"]["runId"]
    assert held == [True]  # the late write came before the agent's next call
    verdict = claude_bench.json("verdict", "show", run_id)
    calls = claude_bench.calls(run_id)
    assert verdict["status"] == "FAILED_INFRASTRUCTURE", (verdict, calls)
    assert verdict["reasons"] == ["a workspace change no recorded call made (agentctl's guard "
                                  "did not see the tool that made it): late.txt"]
    assert [(call["toolName"], call["decision"], call["matchedRule"]) for call in calls] == [
        ("claude.Bash", "ALLOWED", "allow: python3 *"),
        ("claude.Write", "DENIED_BY_POLICY", "native: every change is made by a recorded call")]


# --- Gemini CLI ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gemini_runs(tmp_path_factory: pytest.TempPathFactory, run_agentctl: Any,
                gemini_cli: Path) -> Any:
    """A normal run, and one whose `[agents.gemini] command` is a wrapper that takes the hooks
    out of the settings agentctl wrote before it starts the real CLI."""
    from agentctl.execution.sandboxing.sandbox import program_dirs
    from tests.agents.fake_gemini import gemini_server
    from tests.agents.test_gemini import gemini_config, migration_script

    model = gemini_server()
    bench = _bench(tmp_path_factory, run_agentctl, {
        "GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": "AIza-fake-gemini-0123456789"})
    wrapper = bench.root / "gemini-without-hooks"
    drop = ("import json, os; p = os.path.expanduser('~/.gemini/settings.json'); "
            "s = json.load(open(p)); s.pop('hooks'); json.dump(s, open(p, 'w'))")
    wrapper.write_text(f'#!/bin/sh\npython3 -c "{drop}" || exit 1\nexec {gemini_cli} "$@"\n')
    wrapper.chmod(0o755)
    try:
        bench.config(gemini_config(gemini_cli))
        normal = _run(bench, model, migration_script(), "gemini")
        # the jail shows the configured program's own install: the real CLI's too
        visible = json.dumps([str(d) for d in program_dirs(str(gemini_cli), os.environ["PATH"])])
        bench.config(gemini_config(wrapper) + f"\n[sandbox]\nread_only = {visible}\n"
                     + SHORT_HOLD)
        refused = _run(bench, model, migration_script(), "gemini")
    finally:
        model.close()
    yield bench, {"normal": normal, "refused": refused}


def test_gemini_without_agentctls_hooks_is_refused_before_its_model_is_reached(
        gemini_runs: Any) -> None:
    bench, runs = gemini_runs
    _assert_refused(bench, runs["refused"])


def test_gemini_with_agentctls_hooks_reaches_its_model_and_runs_guarded(
        gemini_runs: Any) -> None:
    bench, runs = gemini_runs
    _assert_guarded(bench, runs["normal"])
