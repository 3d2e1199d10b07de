"""The agent CLIs agentctl guards, by agent name, and the releases its agent tests run: a CLI's
hooks, flags and stream change between releases, so `agentctl doctor` says whether the one
installed here is a release agentctl has been tested with."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AgentCli:
    what: str  # for a person: the CLI and how a run picks it
    tested: tuple[str, ...]  # the releases the agent tests run (tests/agents)


# One row per `--agent NAME` that launches a native CLI (its `[agents.NAME] command`).
AGENT_CLIS: dict[str, AgentCli] = {
    "claude": AgentCli("Claude Code (--agent claude[:MODEL])", ("2.1.197", "2.1.332")),
    "codex": AgentCli("the Codex CLI (--agent codex[:MODEL])", ("0.171.0",)),
    "copilot": AgentCli("GitHub Copilot CLI (--agent copilot[:MODEL])", ("1.0.102",)),
    "gemini": AgentCli("Gemini CLI (--agent gemini[:MODEL])", ("0.61.0",)),
    "opencode": AgentCli("opencode (--agent opencode[:PROVIDER/MODEL])", ("1.18.33",)),
}

_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)")


def version_in(output: str) -> str | None:
    """The release a CLI's `--version` printed (`2.1.197 (Claude Code)`, `codex-cli 0.171.0`,
    `GitHub Copilot CLI 1.0.102.`): its first dotted x.y.z, or None."""
    found = _VERSION.search(output)
    return found.group(1) if found else None


def release_tested(name: str, version: str) -> tuple[bool, str]:
    """Whether agentctl was tested with `version` of agent `name`, and the words for it."""
    tested = AGENT_CLIS[name].tested
    if version in tested:
        return True, "tested by agentctl"
    return False, f"not tested by agentctl (tested: {', '.join(tested)})"
