"""`claude[:MODEL]`: Claude Code headless (`claude -p --output-format stream-json`), every
native tool call checked by agentctl's PreToolUse hook and recorded with its PostToolUse.

Its home is private to the attempt (`HOME`: it keeps its state in `$HOME/.claude*`), so the
user's own `~/.claude` settings, hooks and credentials never reach a run. Only agentctl
configures it: `--setting-sources user` leaves out the repository's `.claude/settings.json` and
`settings.local.json` (which it would otherwise reload mid-run, written by any allowed call), so
no hook, status line or key helper of the repository's runs in the CLI's process tree, outside
any tool jail and unrecorded. "user" is the private home, which holds agentctl's file alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from agentctl.domain.agent import NativeAgentSettings
from agentctl.execution.agents import AgentSession
from agentctl.execution.agents.native import NativeAgent
from agentctl.execution.agents.native_launch import Launch, frozen_spec
from agentctl.execution.agents.stream import StreamState

# Results come from the stream (its `tool_result` blocks carry what PostToolUse would): one
# hook process per tool call instead of two. SessionStart arms the model gateway (the guard is
# loaded in this process); Claude Code waits for it before its first model request.
# PreSkillShellCommand (releases after 2.1.240) checks the shell commands skills and slash
# commands embed, which are no tool calls; an older release skips the event it does not know
# (2.1.197 runs the others as before).
HOOK_EVENTS = ("PreToolUse", "SessionStart", "PreSkillShellCommand")
# The settings Claude Code reads besides agentctl's `--settings` file: neither "project" nor
# "local" (the repository's).
SETTING_SOURCES = "user"
QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
         "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}


class ClaudeAgent(NativeAgent):
    name = "claude"

    def launch(self, session: AgentSession, settings: NativeAgentSettings, home: Path,
               prompt: str, hook: str, mcp: list[str]) -> Launch:
        config = home / ".agentctl"
        config.mkdir(mode=0o700, exist_ok=True)
        hooks = {event: [{"matcher": "*", "hooks": [{"type": "command", "command": hook,
                                                      "timeout": 3600}]}]
                 for event in HOOK_EVENTS}
        settings_file = config / "settings.json"
        settings_file.write_text(json.dumps({"hooks": hooks}, indent=2))
        argv = [settings.command, "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--settings", str(settings_file), "--setting-sources", SETTING_SOURCES,
                "--strict-mcp-config",
                "--max-turns", str(settings.max_turns)]
        if settings.mcp:
            mcp_file = config / "mcp.json"
            mcp_file.write_text(json.dumps({"mcpServers": {"agentctl": {
                "type": "stdio", "command": mcp[0], "args": mcp[1:]}}}, indent=2))
            argv += ["--mcp-config", str(mcp_file)]
        if settings.model:
            argv += ["--model", settings.model]
        cost = frozen_spec(session).get("budget", {}).get("maxCostUsd")
        if isinstance(cost, (int, float)) and cost > 0:
            # Claude Code reports its cost only when it ends: let it keep the bound itself too
            argv += ["--max-budget-usd", f"{cost:g}"]
        argv += list(settings.extra_args)
        return Launch(argv, {**session.env, **QUIET, "HOME": str(home)})

    def read(self, event: Mapping[str, object], state: StreamState) -> None:
        kind = event.get("type")
        if kind == "assistant":
            message = event.get("message")
            if not isinstance(message, dict):
                return
            usage = message.get("usage")  # a claim: the gateway's figures are the record
            if isinstance(usage, dict):
                seen = state.extra.setdefault("_usage", {})
                assert isinstance(seen, dict)
                seen[str(message.get("id"))] = _tokens(usage, state)
                state.input_tokens = sum(pair[0] for pair in seen.values())
                state.output_tokens = sum(pair[1] for pair in seen.values())
        elif kind == "user":
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            blocks: list[object] = content if isinstance(content, list) else []
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    structured = event.get("tool_use_result")
                    response = structured if isinstance(structured, dict) and len(blocks) == 1 \
                        else block.get("content")
                    state.results.append(({"tool_use_id": block.get("tool_use_id"),
                                           "tool_response": _text_of(response)
                                           if not isinstance(response, dict) else response},
                                          block.get("is_error") is True))
        elif kind == "result":
            state.finished = True
            turns = event.get("num_turns")
            state.turns = turns if isinstance(turns, int) else 0
            cost = event.get("total_cost_usd")
            if cost is not None:
                state.claim_cost(cost)
            usage = event.get("usage")
            if isinstance(usage, dict):  # the final totals; a total never shrinks
                total_in, total_out = _tokens(usage, state)
                state.input_tokens = max(state.input_tokens, total_in)
                state.output_tokens = max(state.output_tokens, total_out)
            denials = event.get("permission_denials")
            for denial in denials if isinstance(denials, list) else []:
                if isinstance(denial, dict):
                    state.denials.append(str(denial.get("tool_name")))
            subtype = str(event.get("subtype") or "")
            if event.get("is_error") or subtype != "success":
                detail = event.get("result") or event.get("errors") or ""
                state.error = {"error_max_turns": "it hit its turn limit (max_turns)",
                               "error_max_budget_usd": "it hit its own budget limit"}.get(
                    subtype, f"{subtype or 'error'}: {str(detail)[:300]}".strip(": "))
            state.extra.pop("_usage", None)
            state.extra["sessionId"] = event.get("session_id")
            state.extra["subtype"] = subtype


def _text_of(content: object) -> object:
    """A tool_result's content as text (it may be a list of text blocks)."""
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if content is not None else ""


def _tokens(usage: Mapping[str, object], state: StreamState) -> tuple[int, int]:
    def number(key: str) -> int:
        return state.token_count(usage.get(key), key)

    return (number("input_tokens") + number("cache_creation_input_tokens")
            + number("cache_read_input_tokens"), number("output_tokens"))
