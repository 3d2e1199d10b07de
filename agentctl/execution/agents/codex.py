"""`codex[:MODEL]`: the Codex CLI headless (`codex exec --json`), every native tool call checked
by agentctl's PreToolUse hook and recorded with its PostToolUse.

Its home (`CODEX_HOME`, and `HOME` for the shells it starts) is private to the attempt, with a
`config.toml` agentctl writes: the provider (`base_url`, `env_key`), the hooks and agentctl's
MCP server. It is kept out of the system temp dir: Codex refuses to install its sandbox
helper there, and its own sandbox (`-s workspace-write`) then fails every command.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import platformdirs
import tomli_w

from agentctl.domain.agent import NativeAgentSettings
from agentctl.execution.agents import AgentSession, AttemptIdentity
from agentctl.execution.agents.native import NativeAgent
from agentctl.execution.agents.native_launch import Launch, collector_endpoints
from agentctl.execution.agents.stream import StreamState
from agentctl.execution.sandboxing.sandbox import model_endpoints

# SessionStart arms the model gateway: the hooks are loaded in this process
HOOK_EVENTS = ("PreToolUse", "PostToolUse", "SessionStart")


def config_toml(settings: NativeAgentSettings, hook: str, mcp: list[str],
                traces: str | None) -> str:
    """Codex's `config.toml`, written by a TOML library: a path or model name with any
    character (one outside the BMP, a quote, a newline) stays a string Codex can read."""

    config: dict[str, object] = {}
    if settings.model:
        config["model"] = settings.model
    if settings.base_url:
        config["model_provider"] = "agentctl"
        config["model_providers"] = {"agentctl": {
            "name": "agentctl", "base_url": settings.base_url, "wire_api": "responses",
            "env_key": settings.env_key}}
    if settings.mcp:
        config["mcp_servers"] = {"agentctl": {
            "command": mcp[0], "args": mcp[1:], "startup_timeout_sec": 60,
            "default_tools_approval_mode": "approve"}}
    if traces:  # the run is traced: Codex's own spans go to the same collector
        config["otel"] = {"trace_exporter": {"otlp-http": {
            "endpoint": traces, "protocol": "binary"}}}
    # Interactive sessions off: what `write_stdin` types into a `tty` session fires no
    # hook, so it would run unchecked and unrecorded. Every command then runs to completion
    # as one `exec_command` the PreToolUse hook sees.
    config["features"] = {"unified_exec_tty": False}
    config["hooks"] = {event: [{"matcher": "*", "hooks": [
        {"type": "command", "command": hook, "timeout": 3600}]}] for event in HOOK_EVENTS}
    return tomli_w.dumps(config)


class CodexAgent(NativeAgent):
    name = "codex"
    waits_for_exit_codes = True

    def home_dir(self, identity: AttemptIdentity) -> Path:

        return Path(platformdirs.user_cache_dir("agentctl")) / "codex-homes" / \
            identity.attempt_id

    def launch(self, session: AgentSession, settings: NativeAgentSettings, home: Path,
               prompt: str, hook: str, mcp: list[str]) -> Launch:
        collector = session.env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        traces = collector.rstrip("/") + "/v1/traces" if collector else None
        (home / "config.toml").write_text(config_toml(settings, hook, mcp, traces),
                                          encoding="utf-8")
        # Inside agentctl's sandbox Codex cannot start its own (no nested user namespaces):
        # agentctl's is the confinement then, and Codex is told not to try.
        mode = "danger-full-access" if session.sandbox is not None else "workspace-write"
        argv = [settings.command, "exec", "--json", "-s", mode,
                "--dangerously-bypass-hook-trust", "--skip-git-repo-check"]
        if settings.model:
            argv += ["-m", settings.model]
        argv += [*settings.extra_args, prompt]
        return Launch(argv, {**session.env, "CODEX_HOME": str(home), "HOME": str(home)})

    def endpoints(self, session: AgentSession, settings: NativeAgentSettings) -> tuple[str, ...]:

        env = {**session.env, "CODEX_BASE_URL": settings.base_url} if settings.base_url \
            else session.env
        return model_endpoints(env) + collector_endpoints(session.env)

    def output_told(self, result: str) -> str:
        """An `exec_command` result is a header (chunk id, wall time, session, token count),
        then `Output:` and the output."""
        head, marker, output = result.partition("Output:\n")
        return output if marker and "\n" in head else result

    def read(self, event: Mapping[str, object], state: StreamState) -> None:
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            if item.get("type") == "command_execution":
                code = item.get("exit_code")
                state.commands.append((str(item.get("command", "")),
                                       code if isinstance(code, int) else None))
        elif kind == "turn.completed":
            state.finished = True
            state.turns += 1
            usage = event.get("usage")
            if isinstance(usage, dict):
                state.input_tokens += state.token_count(usage.get("input_tokens"),
                                                        "input_tokens")
                state.output_tokens += state.token_count(usage.get("output_tokens"),
                                                         "output_tokens")
        elif kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            state.error = f"its turn failed: {str(message)[:300]}"
        elif kind == "error":
            state.extra.setdefault("errors", [])
            errors = state.extra["errors"]
            if isinstance(errors, list):
                errors.append(str(event.get("message"))[:300])
