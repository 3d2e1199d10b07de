"""The model API keys a gateway agent's processes must not hold, apart from the gateway itself
(`attach`, which imports its server): an attempt strips them from its environment before it
starts anything, and a run without a model gateway never loads the server for that."""

from __future__ import annotations

import os
from collections.abc import Mapping

from agentctl.domain.agent import NativeAgentSettings
from agentctl.domain.held_secrets import holds

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY",
                 "COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_BEARER_TOKEN", "GEMINI_API_KEY",
                 "GOOGLE_API_KEY")
URL_VARIABLES = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "COPILOT_PROVIDER_BASE_URL",
                 "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL")


def without_keys(env: Mapping[str, str], settings: NativeAgentSettings | None = None,
                 key: str | None = None, *, source: Mapping[str, str] | None = None,
                 ) -> dict[str, str]:
    """`env` without the model API keys, and without any variable that carries `key` (else
    every key variable's value in `source`, default os.environ) in any form: `Bearer <key>`,
    base64, hex, reversed... For everything a gateway agent's run spawns, so no process in its
    sandboxes holds one."""
    names = {*KEY_VARIABLES, *((settings.env_key,) if settings is not None else ())}
    environ = os.environ if source is None else source
    keys = [key] if key else [environ[name] for name in sorted(names) if environ.get(name)]
    return {name: value for name, value in env.items()
            if name not in names and not any(holds(value, k) for k in keys)}
