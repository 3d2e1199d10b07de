"""Codex's `config.toml` is written by a TOML library: a character outside the BMP (an emoji in
a home folder), a quote or a backslash in a path stays the string it was. `json.dumps` wrote
such a character as a surrogate pair escape, which TOML rejects, and Codex could not start."""

from __future__ import annotations

import tomllib
from contextlib import nullcontext
from pathlib import Path

from agentctl.domain.agent import AgentKind, AgentSpec, NativeAgentSettings
from agentctl.execution.agents import AgentSession
from agentctl.execution.agents.codex import CodexAgent

ODD = 'home/😀 "quoted" \\ 𝄞'


def _launch(tmp_path: Path, settings: NativeAgentSettings, env: dict[str, str]) -> dict[str, object]:
    home = tmp_path / "codex-home"
    home.mkdir()
    session = AgentSession(
        instruction="fix it", workspace=tmp_path / ODD, task_file=tmp_path / "task.json",
        tools=None, step=lambda *_: nullcontext(), should_stop=lambda: False,  # type: ignore[arg-type]
        env=env)
    hook = f"{tmp_path / ODD / 'bin' / 'agentctl'} hook codex"
    mcp = [str(tmp_path / ODD / "agentctl"), "mcp", "serve", "--workspace", str(tmp_path / ODD)]
    CodexAgent(AgentSpec(AgentKind.CODEX)).launch(session, settings, home, "fix it", hook, mcp)
    with (home / "config.toml").open("rb") as config:
        return tomllib.load(config)


def test_a_non_bmp_path_and_model_name_read_back_unchanged(tmp_path: Path) -> None:
    settings = NativeAgentSettings(command="codex", model="gpt-😀", base_url="http://127.0.0.1:9/v1",
                                   mcp=True)
    config = _launch(tmp_path, settings, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"})
    odd = str(tmp_path / ODD)
    assert config["model"] == "gpt-😀"
    assert config["mcp_servers"] == {"agentctl": {
        "command": f"{odd}/agentctl", "args": ["mcp", "serve", "--workspace", odd],
        "startup_timeout_sec": 60, "default_tools_approval_mode": "approve"}}
    hooks = config["hooks"]
    assert isinstance(hooks, dict) and set(hooks) == {"PreToolUse", "PostToolUse", "SessionStart"}
    assert hooks["PreToolUse"] == [{"matcher": "*", "hooks": [
        {"type": "command", "command": f"{odd}/bin/agentctl hook codex", "timeout": 3600}]}]
    assert config["model_provider"] == "agentctl"
    assert config["otel"] == {"trace_exporter": {"otlp-http": {
        "endpoint": "http://127.0.0.1:4318/v1/traces", "protocol": "binary"}}}
    assert config["features"] == {"unified_exec_tty": False}


def test_without_a_provider_mcp_or_collector_only_the_hooks_and_features_are_written(
        tmp_path: Path) -> None:
    config = _launch(tmp_path, NativeAgentSettings(command="codex"), {})
    assert set(config) == {"features", "hooks"}
