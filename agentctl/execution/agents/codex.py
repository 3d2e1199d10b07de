"""`codex[:MODEL]`: the Codex CLI headless (`codex exec --json`), every native tool call checked
by agentctl's PreToolUse hook and recorded with its PostToolUse.

Its home (`CODEX_HOME`, and `HOME` for the shells it starts) is private to the attempt, with a
`config.toml` agentctl writes: the provider (`base_url`, `env_key`), the hooks and agentctl's
MCP server. It is kept out of the system temp dir: Codex refuses to install its sandbox
helper there, and its own sandbox (`-s workspace-write`) then fails every command.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from agentctl.domain.agent import NativeAgentSettings
from agentctl.execution.agents import AgentSession, AttemptIdentity
from agentctl.execution.agents.native import Launch, NativeAgent, collector_endpoints
from agentctl.execution.agents.stream import StreamState

HOOK_EVENTS = ("PreToolUse", "PostToolUse")


def _toml(value: object) -> str:
    """A TOML value: JSON's strings and lists are TOML's too."""
    return json.dumps(value)


class CodexAgent(NativeAgent):
    name = "codex"
    waits_for_exit_codes = True

    def home_dir(self, identity: AttemptIdentity) -> Path:
        import platformdirs

        return Path(platformdirs.user_cache_dir("agentctl")) / "codex-homes" / \
            identity.attempt_id

    def launch(self, session: AgentSession, settings: NativeAgentSettings, home: Path,
               prompt: str, hook: str, mcp: list[str]) -> Launch:
        lines = []
        if settings.model:
            lines.append(f"model = {_toml(settings.model)}")
        if settings.base_url:
            lines += ['model_provider = "agentctl"', "", "[model_providers.agentctl]",
                      'name = "agentctl"', f"base_url = {_toml(settings.base_url)}",
                      'wire_api = "responses"', f"env_key = {_toml(settings.env_key)}"]
        if settings.mcp:
            lines += ["", "[mcp_servers.agentctl]", f"command = {_toml(mcp[0])}",
                      f"args = {_toml(mcp[1:])}", "startup_timeout_sec = 60",
                      'default_tools_approval_mode = "approve"']
        collector = session.env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        if collector:  # the run is traced: Codex's own spans go to the same collector
            traces = _toml(collector.rstrip("/") + "/v1/traces")
            lines += ["", "[otel]", "trace_exporter = { otlp-http = { endpoint = "
                      f'{traces}, protocol = "binary" }} }}']
        # Interactive sessions off: what `write_stdin` types into a `tty` session fires no
        # hook, so it would run unchecked and unrecorded. Every command then runs to completion
        # as one `exec_command` the PreToolUse hook sees.
        lines += ["", "[features]", "unified_exec_tty = false"]
        for event in HOOK_EVENTS:
            lines += ["", f"[[hooks.{event}]]", 'matcher = "*"', f"[[hooks.{event}.hooks]]",
                      'type = "command"', f"command = {_toml(hook)}", "timeout = 3600"]
        (home / "config.toml").write_text("\n".join(lines) + "\n")
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
        from agentctl.execution.sandbox import model_endpoints

        env = {**session.env, "CODEX_BASE_URL": settings.base_url} if settings.base_url \
            else session.env
        return model_endpoints(env) + collector_endpoints(session.env)

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
