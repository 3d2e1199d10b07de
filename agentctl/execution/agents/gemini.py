"""`gemini[:MODEL]`: Gemini CLI headless (`gemini -p --output-format stream-json`), every
native tool call checked by agentctl's hook before it runs (`BeforeTool`) and recorded from
the hook after it (`AfterTool`); its stream shows the model's arguments, not what ran.

Its home is private to the attempt (`HOME`: `~/.gemini` holds agentctl's settings alone), and
only those settings load:
- The repository's `.gemini/settings.json` (hooks, MCP servers, a tool discovery command) is
  merged only into a trusted folder's settings, and they are read before `--skip-trust` makes
  the folder trusted (`GEMINI_CLI_TRUST_WORKSPACE` is set to false for that read, and that
  variable, never the flag, would make them load).
- The machine's system settings (`/etc/gemini-cli`, which override the user's and could turn
  hooks off) are replaced by a file that does not exist: Gemini loads a system file only
  when it and every folder above it are root's and writable by no one else, which a per-attempt
  file never is.
A hook that crashes or times out is "allow" to Gemini: agentctl's hook turns every failure
into exit 2 (a denial) and answers within its own deadline, far below the timeout set here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from agentctl.domain.agent import AgentSpec, NativeAgentSettings
from agentctl.execution.agents import AgentOutcome, AgentSession, NativeTools
from agentctl.execution.agents.channel import for_event
from agentctl.execution.agents.hook_socket import Source
from agentctl.execution.agents.native import NativeAgent
from agentctl.execution.agents.native_launch import Launch
from agentctl.execution.agents.spec import gemini_model
from agentctl.execution.agents.stream import StreamReader, StreamState
from agentctl.execution.process import ProcessResult

# Gemini's event, agentctl's name for it, the matcher (a regex on the tool's name; the
# session's source is matched as a string, where only "*" matches every one)
HOOK_EVENTS = (("BeforeTool", "PreToolUse", ".*"), ("AfterTool", "PostToolUse", ".*"),
               ("SessionStart", "SessionStart", "*"))
# Gemini's hook timeout (ms): a timed-out hook allows the call, so far above the hook's own
# deadline (hook.REPLY_SECONDS, an hour for a person at an `ask` prompt)
HOOK_TIMEOUT_MS = 4 * 3600 * 1000
# What the CLI must not inherit: its own home, trust, sandbox and settings overrides, and any
# account other than the gateway's key
DROPPED = ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "GEMINI_RESTRICTED_MODE",
           "GEMINI_SANDBOX", "SANDBOX", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA",
           "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS",
           "GOOGLE_VERTEX_BASE_URL", "CLOUD_SHELL")
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_WRAPPER = re.compile(r"^\s*<untrusted_context>\n?|\n?</untrusted_context>\s*$")
TURN_LIMIT_EXIT = 53
SHELL_TOOL = "run_shell_command"  # its answer ends with `Exit Code: N` when N is not 0


def settings_json(settings: NativeAgentSettings, hook: str) -> str:
    """`~/.gemini/settings.json`: the API key auth (else 0.61 picks an auth type it then
    rejects, exit 41), the hooks on, telemetry and updates off, the turn limit."""
    hooks = {event: [{"matcher": matcher, "hooks": [{
        "type": "command", "name": f"agentctl-{ours}", "command": for_event(hook, ours),
        "timeout": HOOK_TIMEOUT_MS}]}] for event, ours, matcher in HOOK_EVENTS}
    return json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "hooksConfig": {"enabled": True},
        "hooks": hooks,
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "model": {"maxSessionTurns": settings.max_turns},
    }, indent=2)


class GeminiAgent(NativeAgent):
    name = "gemini"
    # the guard proves itself loaded by Gemini's SessionStart hook (the enforcement canary)
    arming = "session-start"
    quiet_lines = ("Warning: 256-color support", "YOLO mode is enabled", "[STARTUP]",
                   "Ripgrep is not available")

    def __init__(self, spec: AgentSpec) -> None:
        super().__init__(spec)
        # a shell call's input as rewritten (its command the jail's stub), sorted JSON, to
        # the model's: AfterTool reports the rewritten one and names no call id
        self._routed: dict[str, dict[str, object]] = {}

    def launch(self, session: AgentSession, settings: NativeAgentSettings, home: Path,
               prompt: str, hook: str, mcp: list[str]) -> Launch:
        config = home / ".gemini"
        config.mkdir(mode=0o700, exist_ok=True)
        (config / "settings.json").write_text(settings_json(settings, hook), encoding="utf-8")
        private = home / ".agentctl"
        private.mkdir(mode=0o700, exist_ok=True)
        argv = [settings.command, "-p", prompt, "--output-format", "stream-json",
                "--approval-mode", "yolo", "--skip-trust"]
        if settings.model:
            argv += ["-m", settings.model]
        argv += list(settings.extra_args)
        env = {name: value for name, value in session.env.items()
               if name not in DROPPED and not name.startswith("GEMINI_CLI_")}
        env.update(HOME=str(home), GEMINI_CLI_TRUST_WORKSPACE="false",
                   GEMINI_CLI_SYSTEM_SETTINGS_PATH=str(private / "no-system-settings.json"),
                   GEMINI_CLI_SYSTEM_DEFAULTS_PATH=str(private / "no-system-defaults.json"))
        return Launch(argv, env)

    def run(self, session: AgentSession) -> AgentOutcome:

        model = session.settings.model if session.settings is not None else ""
        if model and not gemini_model(model):
            return AgentOutcome(error=f"gemini cannot start: model {model[:80]!r} cannot be "
                                      "part of Gemini's API path (letters, digits, '.', '_' "
                                      "and '-' only; set [agents.gemini] model)")
        return super().run(session)

    def _handle(self, message: dict[str, object], source: Source, native: NativeTools,
                reader: StreamReader, state: StreamState,
                session: AgentSession) -> dict[str, object]:
        if source is Source.HOOK:  # anything else is refused as it came
            message = self._normalized(message)
        answer = super()._handle(message, source, native, reader, state, session)
        routed = answer.get("updatedInput")
        payload = message.get("input")
        if isinstance(routed, str) and isinstance(payload, dict):
            original = payload.get("tool_input")
            if isinstance(original, dict):
                self._routed[_key(json.loads(routed))] = original
        return answer

    def _normalized(self, message: dict[str, object]) -> dict[str, object]:
        """AfterTool's input in the shape the attempt records: the model's input again for
        a rewritten call (so it closes the call its BeforeTool opened), the tool's answer as
        text with its exit code, and a failed tool as PostToolUseFailure."""
        payload = message.get("input")
        if message.get("event") != "PostToolUse" or not isinstance(payload, dict):
            return message
        tool_input = payload.get("tool_input")
        original = self._routed.pop(_key(tool_input), None) \
            if isinstance(tool_input, dict) else None
        response = payload.get("tool_response")
        response = response if isinstance(response, dict) else {}
        text = _content_text(response.get("llmContent"))
        error = response.get("error")
        shell = payload.get("tool_name") == SHELL_TOOL
        found = _EXIT_CODE.search(text) if shell else None
        result: dict[str, object] = {"output": _WRAPPER.sub("", text)}
        if found:
            result["exit_code"] = int(found.group(1))
            if result["exit_code"]:
                result["error"] = f"exited with code {found.group(1)}"
        if error:
            result["error"] = error.get("message") if isinstance(error, dict) else str(error)
        return {**message, "event": "PostToolUseFailure" if error else "PostToolUse",
                "input": {**payload, "tool_input": original or tool_input,
                          "tool_response": result}}

    def read(self, event: Mapping[str, object], state: StreamState) -> None:
        kind = event.get("type")
        if kind == "init":
            state.extra["sessionId"] = event.get("session_id")
        elif kind == "error":
            errors = state.extra.setdefault("errors", [])
            if isinstance(errors, list):
                errors.append(str(event.get("message"))[:300])
        elif kind == "result":
            state.finished = True
            stats = event.get("stats")
            stats = stats if isinstance(stats, dict) else {}
            state.input_tokens = state.token_count(stats.get("input_tokens"), "input_tokens")
            state.output_tokens = state.token_count(stats.get("output_tokens"),
                                                    "output_tokens")
            status = str(event.get("status") or "")
            state.extra["status"] = status
            if status != "success":
                error = event.get("error")
                detail = error.get("message") if isinstance(error, dict) else error
                state.error = f"{status or 'error'}: {str(detail or '')[:300]}".strip(": ")

    def outcome(self, process: ProcessResult | None, state: StreamState, native: NativeTools,
                timeout: float) -> AgentOutcome:
        if process is not None and process.exit_code == TURN_LIMIT_EXIT \
                and native.over_budget() is None and not process.timed_out:
            return AgentOutcome(error="gemini could not complete: it hit its turn limit "
                                      "(max_turns)")
        return super().outcome(process, state, native, timeout)


def _key(tool_input: object) -> str:
    return json.dumps(tool_input, sort_keys=True, default=str)


def _content_text(content: object) -> str:
    """Gemini's `llmContent`: a string, or parts (`{"text": ...}`)."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    return "\n".join(str(part.get("text", "")) if isinstance(part, dict) else str(part)
                     for part in parts if part is not None)
