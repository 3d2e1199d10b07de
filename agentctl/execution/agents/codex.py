"""`codex[:MODEL]`: the Codex CLI headless (`codex exec --json`)."""

from __future__ import annotations

from agentctl.execution.agents.native import NativeAgent


class CodexAgent(NativeAgent):
    name = "codex"
