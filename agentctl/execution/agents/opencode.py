"""`opencode[:PROVIDER/MODEL]`: opencode headless (`opencode run --format json`), every native
tool call checked by agentctl's guard, a plugin of agentctl's own loaded inside the CLI.

opencode has no hook command: its guard is in-process JS (`opencode_guard.js`), copied into an
`OPENCODE_CONFIG_DIR` private to the attempt with the attempt's settings beside it. Its
`tool.execute.before` asks the attempt over the hook socket (a throw denies; a shell command
is rewritten to the tool jail's stub), `tool.execute.after` reports the result. Its home and
XDG folders are private too, and `OPENCODE_DISABLE_PROJECT_CONFIG` keeps the repository's
`opencode.json`, `.opencode/` plugins, agents and commands out; only agentctl configures it
(`OPENCODE_CONFIG_CONTENT`: one provider, agentctl's gateway, and nothing else enabled).

opencode skips a plugin that fails to load without a word, so the guard proves itself on every
model request: the plugin adds the attempt's guard nonce (`x-agentctl-guard`), and the gateway
forwards no request without it (the enforcement canary, `arming = "header"`). No plugin, no
model answer, no tool call: the run ends FAILED_INFRASTRUCTURE "the agent's guard did not load".
Its exit code is 0 even when calls were denied: how it ended is read from its events.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from agentctl.domain.agent import Arming, ModelApi, NativeAgentSettings
from agentctl.domain.provider_model import provider_model
from agentctl.execution.agents import AgentSession
from agentctl.execution.agents.native import NativeAgent
from agentctl.execution.agents.native_launch import Launch, collector_endpoints
from agentctl.execution.agents.stream import StreamState
from agentctl.execution.sandboxing.sandbox import model_endpoints
from agentctl.hooks import wire

PLUGIN = Path(__file__).with_name("opencode_guard.js")
SETTINGS = "agentctl-guard.json"  # what the plugin reads, beside its plugins/ folder
PROVIDER = "agentctl"
SDKS = {ModelApi.ANTHROPIC: "@ai-sdk/anthropic", ModelApi.OPENAI: "@ai-sdk/openai"}
QUIET = {"OPENCODE_DISABLE_PROJECT_CONFIG": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
         "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
         "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1",
         "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1"}
# what opencode reads for a model of its own, besides agentctl's provider: never passed on
VENDOR_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
                    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "CODEX_API_KEY")
AGENTS = ("build", "general", "explore")  # its primary agent and the subagents it may start


class OpencodeAgent(NativeAgent):
    name = "opencode"
    # how the guard proves itself loaded: a per-run header on every model request
    arming = Arming.HEADER
    starts_hook = False  # its plugin asks the attempt itself

    def launch(self, session: AgentSession, settings: NativeAgentSettings, home: Path,
               prompt: str, hook: str, mcp: list[str]) -> Launch:
        identity = session.identity
        if identity is None:
            raise ValueError("opencode needs the attempt's hook socket")
        api, model = provider_model(settings.model)
        config = home / ".agentctl" / "opencode"
        (config / "plugins").mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copyfile(PLUGIN, config / "plugins" / "agentctl-guard.js")
        xdg = {"XDG_CONFIG_HOME": home / ".config", "XDG_DATA_HOME": home / ".local" / "share",
               "XDG_CACHE_HOME": home / ".cache", "XDG_STATE_HOME": home / ".local" / "state"}
        for folder in (config, xdg["XDG_CONFIG_HOME"] / "opencode"):
            offline(folder)
        url, key = gateway_of(api, session.env, settings)
        private(config / SETTINGS, json.dumps({
            "socket": str(identity.private / wire.SOCKET_NAME), "attempt": identity.attempt_id,
            "key": self.keys.hook, "guard": self.keys.guard}))
        env = {name: value for name, value in session.env.items()
               if name not in VENDOR_VARIABLES and not name.startswith("OPENCODE_")}
        content = config_content(api, model, url, key, settings)
        env.update(QUIET, HOME=str(home), OPENCODE_CONFIG_DIR=str(config),
                   OPENCODE_CONFIG_CONTENT=json.dumps(content),
                   **{name: str(path) for name, path in xdg.items()})
        argv = [settings.command, "run", "--format", "json", *settings.extra_args, "--", prompt]
        return Launch(argv, env)

    def endpoints(self, session: AgentSession, settings: NativeAgentSettings) -> tuple[str, ...]:

        env = {**session.env, "OPENAI_BASE_URL": settings.base_url} if settings.base_url \
            else session.env
        return model_endpoints(env) + collector_endpoints(session.env)

    def read(self, event: Mapping[str, object], state: StreamState) -> None:
        kind = event.get("type")
        part = event.get("part")
        part = part if isinstance(part, dict) else {}
        if kind == "step_start":
            state.finished = False
        elif kind == "step_finish":
            state.turns += 1
            state.finished = part.get("reason") not in ("tool-calls", "tool_calls")
            tokens = part.get("tokens")  # a claim: the gateway's figures are the record
            if isinstance(tokens, dict):
                cache = tokens.get("cache")
                cache = cache if isinstance(cache, dict) else {}
                state.input_tokens += state.token_count(tokens.get("input"), "input") \
                    + state.token_count(cache.get("read"), "cache.read") \
                    + state.token_count(cache.get("write"), "cache.write")
                state.output_tokens += state.token_count(tokens.get("output"), "output")
            cost = part.get("cost")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
                state.claim_cost(state.cost_usd + cost)
        elif kind == "tool_use":
            # a tool that failed has no `tool.execute.after`: its error is read here (a call
            # the plugin denied is not pending, so this closes nothing for it)
            tool_state = part.get("state")
            if isinstance(tool_state, dict) and tool_state.get("status") == "error":
                state.results.append(({"tool_use_id": part.get("callID"),
                                       "tool_name": part.get("tool"),
                                       "tool_response": {"error": str(tool_state.get("error"))}},
                                      True))
        elif kind == "error":
            error = event.get("error")
            data = error.get("data") if isinstance(error, dict) else None
            message = data.get("message") if isinstance(data, dict) else None
            name = error.get("name") if isinstance(error, dict) else None
            state.error = f"{name or 'error'}: {str(message or error)[:300]}"
        if isinstance(event.get("sessionID"), str):
            state.extra["sessionId"] = event["sessionID"]


def gateway_of(api: ModelApi, env: Mapping[str, str],
               settings: NativeAgentSettings) -> tuple[str, str]:
    """The gateway's base URL as the vendor's SDK takes it, and its placeholder key (what
    `attach` gave the CLI's environment; opencode gets them in its configuration instead)."""
    if api is ModelApi.OPENAI:
        return settings.base_url, env.get("OPENAI_API_KEY", "")
    key = env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN") or ""
    return env.get("ANTHROPIC_BASE_URL", "").rstrip("/") + "/v1", key


def config_content(api: ModelApi, model: str, url: str, key: str,
                   settings: NativeAgentSettings) -> dict[str, object]:
    """opencode's whole configuration: one provider (the gateway, its placeholder key), no
    other enabled, every permission allowed (agentctl's plugin is the policy; an `ask` would
    only auto-reject headless), no title call, snapshots, LSP, formatters, sharing or
    updates."""
    return {
        "provider": {PROVIDER: {"npm": SDKS[api], "name": "agentctl gateway",
                                "options": {"baseURL": url, "apiKey": key},
                                "models": {model: {"name": model}}}},
        "enabled_providers": [PROVIDER],
        "model": f"{PROVIDER}/{model}", "small_model": f"{PROVIDER}/{model}",
        "permission": {"*": "allow"},
        "agent": {"title": {"disable": True},
                  **{name: {"steps": settings.max_turns} for name in AGENTS}},
        "snapshot": False, "lsp": False, "formatter": False, "share": "disabled",
        "autoupdate": False, "mcp": {},
    }


def offline(folder: Path) -> None:
    """opencode installs its plugin SDK with npm into each config folder at start (network, and
    seconds) unless the folder's lockfile already lists it: agentctl's plugin needs none."""
    (folder / "node_modules").mkdir(mode=0o700, parents=True, exist_ok=True)
    (folder / "package-lock.json").write_text(json.dumps(
        {"packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}))


def private(path: Path, text: str) -> None:
    """A file only this user may read (it holds the hook key)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
