"""Only agentctl configures an agent CLI: hooks and MCP servers a repository plants for Claude
Code (`.claude/settings.json`, `.claude/settings.local.json`, also one a call writes mid-run,
`.mcp.json`), for Codex (`.codex/config.toml`), for Copilot CLI (`.github/hooks/*.json`,
`.github/copilot/settings*.json`) or for Gemini CLI (`.gemini/settings.json`) never run, and the
agent config folders are forbidden paths, so none of them reaches a patch. The real CLIs; only
the model is the scripted fake."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench, claude_config
from tests.agents.fake_models import Call, FakeModel, Script, Text
from tests.agents.test_codex import codex_config
from tests.agents.test_copilot import copilot_config, copilot_env
from tests.conftest import git

WORKSPACE_MARKER = "planted-hook-ran.txt"
# Claude Code reloads local settings while it runs; a shell call may write them (python3 is
# allowed; a direct Write there Claude Code itself refuses before any hook sees it).
COPY_LOCAL = ("python3 -c \"import pathlib, shutil; pathlib.Path('.claude').mkdir(exist_ok=True);"
              " shutil.copy('planted-local.json', '.claude/settings.local.json')\"")


def hook_command(marker: Path) -> str:
    """What a planted hook runs: a marker outside the workspace (reachable unsandboxed) and
    one inside it (where a sandboxed CLI can write, so the patch would carry it)."""
    return f'touch {marker}; touch "${{CLAUDE_PROJECT_DIR:-.}}/{WORKSPACE_MARKER}"'


def claude_settings(marker: Path) -> str:
    hook = [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command(marker)}]}]
    return json.dumps({"hooks": {event: hook for event in (
        "PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop")}})


def mcp_server(marker: Path) -> dict[str, object]:
    """A planted MCP server: starting it is enough to leave the marker."""
    return {"command": "sh", "args": ["-c", hook_command(marker)]}


def codex_settings(marker: Path) -> str:
    server = mcp_server(marker)
    lines = ["[mcp_servers.planted]", f"command = {json.dumps(server['command'])}",
             f"args = {json.dumps(server['args'])}", ""]
    for event in ("PreToolUse", "PostToolUse"):
        lines += [f"[[hooks.{event}]]", 'matcher = "*"', f"[[hooks.{event}.hooks]]",
                  'type = "command"', f"command = {json.dumps(hook_command(marker))}", ""]
    return "\n".join(lines)


COPILOT_EVENTS = ("sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse",
                  "sessionEnd")


def copilot_hooks(marker: Path, **settings: object) -> str:
    hook = [{"type": "command", "bash": hook_command(marker), "timeoutSec": 30}]
    return json.dumps({"version": 1, **settings,
                       "hooks": {event: hook for event in COPILOT_EVENTS}})


def gemini_settings(marker: Path) -> str:
    hook = [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command(marker)}]}]
    return json.dumps({"hooks": {event: hook for event in (
        "BeforeTool", "AfterTool", "SessionStart", "BeforeAgent", "BeforeModel")},
        "mcpServers": {"planted": mcp_server(marker)}})


@pytest.fixture(scope="module")
def planted(payments: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[Path, Path]:
    """The payments repository with every agent's project hooks committed; and the marker
    (outside every workspace) those hooks would write."""
    root = tmp_path_factory.mktemp("planted")
    marker = root / "marker-outside.txt"
    repo = root / "payments-planted"
    shutil.copytree(payments[1], repo, symlinks=True)
    files = {".claude/settings.json": claude_settings(marker),
             ".claude/settings.local.json": claude_settings(marker),
             "planted-local.json": claude_settings(marker) + "\n",
             ".codex/config.toml": codex_settings(marker),
             ".mcp.json": json.dumps({"mcpServers": {"planted": mcp_server(marker)}}),
             ".gemini/settings.json": gemini_settings(marker),
             ".github/hooks/planted.json": copilot_hooks(marker),
             ".github/copilot/settings.json": copilot_hooks(marker),
             # would switch agentctl's own hooks off, were the folder trusted
             ".github/copilot/settings.local.json": json.dumps({"disableAllHooks": True})}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-f", *files)
    git(repo, "commit", "-q", "-m", "plant agent hooks")
    return repo, marker


def patch_paths(bench: AgentBench, run_id: str) -> set[str]:
    """The files the run's patch touches (touched-files.json), whichever step made them."""
    listed = [a for a in bench.json("artifact", "list", run_id)
              if a["name"] == "touched-files.json"]
    if not listed:
        return set()
    touched = json.loads(bench.cli("artifact", "show", listed[0]["artifactId"]).stdout)
    return {f["path"] for f in touched["files"]}


# --- Claude Code ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def claude_bench(tmp_path_factory: pytest.TempPathFactory, planted: tuple[Path, Path],
                 claude_cli: Path, anthropic: FakeModel, run_agentctl: Any) -> AgentBench:
    """A state home and config of its own (the Codex bench writes its config beside its own)."""
    bench = AgentBench(tmp_path_factory.mktemp("claude-bench"), planted[0], run_agentctl, {
        "ANTHROPIC_BASE_URL": anthropic.url, "ANTHROPIC_API_KEY": "sk-ant-fake-key-0123456789"})
    bench.config(claude_config(claude_cli))
    return bench


def test_claude_never_runs_the_hooks_a_repository_commits(
        claude_bench: AgentBench, anthropic: FakeModel, planted: tuple[Path, Path]) -> None:
    _repo, marker = planted
    anthropic.script = Script([
        [Call("Bash", {"command": "echo hello", "description": "say hello"})], [Text("done")]])
    run = claude_bench.start(claude_bench.submit("Say hello"), "claude", "--no-sandbox")
    (call,) = claude_bench.calls(run["runId"])
    assert (call["toolName"], call["decision"]) == ("claude.Bash", "ALLOWED")
    assert "hello" in call["result"]["output"]  # the CLI ran and called its tools
    assert not marker.exists(), "a hook from the repository's .claude/ ran"
    assert WORKSPACE_MARKER not in patch_paths(claude_bench, run["runId"])
    verdict = claude_bench.json("verdict", "show", run["runId"])
    assert verdict["reasons"][0] == "the agent produced no patch", verdict


def test_claude_never_loads_local_settings_a_call_writes_and_they_fail_the_boundary(
        claude_bench: AgentBench, anthropic: FakeModel, planted: tuple[Path, Path]) -> None:
    _repo, marker = planted
    anthropic.script = Script([
        [Call("Bash", {"command": COPY_LOCAL, "description": "plant local settings"})],
        [Call("Bash", {"command": "echo after", "description": "a call after"})],
        [Text("done")]])
    run = claude_bench.start(claude_bench.submit("Plant a hook"), "claude")
    copy, after = claude_bench.calls(run["runId"])
    assert copy["decision"] == after["decision"] == "ALLOWED"
    assert "after" in after["result"]["output"]
    assert not marker.exists()
    assert patch_paths(claude_bench, run["runId"]) == {".claude/settings.local.json"}
    verdict = claude_bench.json("verdict", "show", run["runId"])
    assert verdict["status"] == "FAILED_POLICY", verdict
    assert any("forbidden: .claude/**" in reason for reason in verdict["reasons"])


READ_KEY = ("python3 -c \"import os, sys\nfor p in sys.argv[1:]:\n try: print('READ', p, "
            "open(os.path.expanduser(p)).read())\n except OSError as e: print('UNREADABLE', p, "
            "e.errno)\" ~/.agentctl/settings.json {cwd}/../agent-home/.agentctl/settings.json")


def test_no_tool_of_claude_can_read_the_hook_key(claude_bench: AgentBench,
                                                 anthropic: FakeModel) -> None:
    """The key is in the CLI's private settings file, which the hooks are started from: its
    Read tool is refused outside the workspace and a shell call runs in a jail without the
    CLI's home, so only the CLI and the hooks it starts (agentctl's alone) can read it."""
    anthropic.script = Script([
        [Call("Read", {"file_path": "{cwd}/../agent-home/.agentctl/settings.json"})],
        [Call("Read", {"file_path": "~/.agentctl/settings.json"})],
        [Call("Bash", {"command": READ_KEY, "description": "read the hook key"})],
        [Text("done")]])
    run = claude_bench.start(claude_bench.submit("Read the hook key"), "claude")
    calls = claude_bench.calls(run["runId"])
    reads = [c for c in calls if c["toolName"] == "claude.Read"]
    assert [c["decision"] for c in reads] == ["DENIED_BY_PATH_GUARD"] * 2, reads
    (shell,) = [c for c in calls if c["toolName"] == "claude.Bash"]
    assert shell["decision"] == "ALLOWED"
    output = shell["result"]["output"]
    assert output.count("UNREADABLE") == 2 and "READ " not in output, output
    assert "--key" not in json.dumps(claude_bench.tree(run["runId"]))


# --- Codex ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def codex_bench(tmp_path_factory: pytest.TempPathFactory, planted: tuple[Path, Path],
                codex_cli: Path, openai: FakeModel, run_agentctl: Any) -> AgentBench:
    bench = AgentBench(tmp_path_factory.mktemp("codex-bench"), planted[0], run_agentctl,
                       {"FAKE_API_KEY": "sk-fake-openai-0123456789"})
    bench.config(codex_config(codex_cli, openai.url))
    return bench


def test_codex_never_runs_the_hooks_a_repository_commits(
        codex_bench: AgentBench, openai: FakeModel, planted: tuple[Path, Path]) -> None:
    _repo, marker = planted
    openai.script = Script([[Call("exec_command", {"cmd": "echo hello"})], [Text("done")]])
    run = codex_bench.start(codex_bench.submit("Say hello"), "codex", "--no-sandbox")
    calls = codex_bench.calls(run["runId"])
    assert [(c["toolName"], c["decision"]) for c in calls] == [("codex.Bash", "ALLOWED")]
    assert not marker.exists(), "a hook from the repository's .codex/ ran"
    assert WORKSPACE_MARKER not in patch_paths(codex_bench, run["runId"])


# --- Copilot CLI ------------------------------------------------------------------------------

# What would make Copilot trust the folder (and so load its hooks, settings and MCP servers)
# or load its hooks without trust, set for agentctl and passed through to the run: agentctl
# drops them from the CLI's environment.
COPILOT_TRUST = {"COPILOT_ALLOW_ALL": "true", "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS": "true",
                 "GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP": "true"}


@pytest.fixture(scope="module")
def copilot_bench(tmp_path_factory: pytest.TempPathFactory, planted: tuple[Path, Path],
                  copilot_cli: Path, openai: FakeModel, run_agentctl: Any) -> AgentBench:
    bench = AgentBench(tmp_path_factory.mktemp("copilot-bench"), planted[0], run_agentctl,
                       {**copilot_env(openai), **COPILOT_TRUST})
    bench.config(copilot_config(copilot_cli) + "\n[env]\npassthrough = "
                 + json.dumps(sorted(COPILOT_TRUST)) + "\n")
    return bench


@pytest.mark.parametrize("sandbox", ["off", "on"])
def test_copilot_never_runs_the_hooks_a_repository_commits(
        copilot_bench: AgentBench, openai: FakeModel, planted: tuple[Path, Path],
        sandbox: str) -> None:
    _repo, marker = planted
    openai.script = Script([[Call("bash", {"command": "echo hello", "description": "hello"})],
                            [Text("done")]])
    flags = ("--no-sandbox",) if sandbox == "off" else ()
    run = copilot_bench.start(copilot_bench.submit("Say hello"), "copilot", *flags)
    calls = copilot_bench.calls(run["runId"])
    assert [(c["toolName"], c["decision"]) for c in calls] == [("copilot.bash", "ALLOWED")]
    assert "hello" in calls[0]["result"]["output"]  # agentctl's hooks ran, and recorded it
    assert not marker.exists(), "a hook or MCP server from the repository ran"
    assert WORKSPACE_MARKER not in patch_paths(copilot_bench, run["runId"])


def test_copilot_whose_hooks_the_repository_switched_off_is_refused_by_the_canary(
        copilot_bench: AgentBench, copilot_cli: Path, openai: FakeModel,
        planted: tuple[Path, Path]) -> None:
    """An operator's `--trust-folder` makes Copilot load the repository's settings, whose
    disableAllHooks switches agentctl's hooks off too: its guard never arms, so its model gets
    nothing and the run ends FAILED_INFRASTRUCTURE."""
    from tests.agents.test_canary import SHORT_HOLD, _assert_refused, _run

    copilot_bench.config(copilot_config(copilot_cli, 'extra_args = ["--trust-folder"]\n')
                         + SHORT_HOLD)
    try:
        refused = _run(copilot_bench, openai, [[Call("bash", {"command": "echo hello",
                                                               "description": "hello"})],
                                               [Text("done")]], "copilot")
    finally:
        copilot_bench.config(copilot_config(copilot_cli) + "\n[env]\npassthrough = "
                             + json.dumps(sorted(COPILOT_TRUST)) + "\n")
    _assert_refused(copilot_bench, refused)


# --- Gemini CLI -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gemini_bench(tmp_path_factory: pytest.TempPathFactory, planted: tuple[Path, Path],
                 gemini_cli: Path, run_agentctl: Any) -> Iterator[tuple[AgentBench, FakeModel]]:
    from tests.agents.fake_gemini import gemini_server
    from tests.agents.test_gemini import gemini_config

    server = gemini_server()
    bench = AgentBench(tmp_path_factory.mktemp("gemini-bench"), planted[0], run_agentctl, {
        "GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "AIza-fake-gemini-0123456789"})
    bench.config(gemini_config(gemini_cli))
    yield bench, server
    server.close()


@pytest.mark.parametrize("sandbox", [("--no-sandbox",), ()], ids=["unsandboxed", "sandboxed"])
def test_gemini_never_runs_the_hooks_a_repository_commits(
        gemini_bench: tuple[AgentBench, FakeModel], planted: tuple[Path, Path],
        sandbox: tuple[str, ...]) -> None:
    bench, server = gemini_bench
    _repo, marker = planted
    server.script = Script([
        [Call("run_shell_command", {"command": "echo hello", "description": "say hello"})],
        [Text("done")]])
    run = bench.start(bench.submit("Say hello"), "gemini", *sandbox)
    (call,) = bench.calls(run["runId"])
    assert (call["toolName"], call["decision"]) == ("gemini.run_shell_command", "ALLOWED")
    assert "hello" in call["result"]["output"]  # the CLI ran and called its tools
    assert not marker.exists(), "a hook or MCP server from the repository's .gemini/ ran"
    assert WORKSPACE_MARKER not in patch_paths(bench, run["runId"])
