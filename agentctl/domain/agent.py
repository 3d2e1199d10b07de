"""Which agent a run uses, as a typed value: parsed once from what the user typed, frozen into
the ExecutionSpec as its description (`script:/abs/plan.toml`) and digest, and read back typed."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath


class AgentKind(StrEnum):
    SCRIPT = "script"
    PATCH = "patch"
    COMMAND = "command"
    NOOP = "noop"
    CLAUDE = "claude"  # Claude Code, each native tool call guarded through its hooks
    CODEX = "codex"  # the Codex CLI, likewise
    COPILOT = "copilot"  # GitHub Copilot CLI, likewise
    GEMINI = "gemini"  # Gemini CLI, likewise
    OPENCODE = "opencode"  # opencode, each native tool call guarded by agentctl's plugin


NATIVE_KINDS = frozenset({AgentKind.CLAUDE, AgentKind.CODEX, AgentKind.COPILOT, AgentKind.GEMINI,
                          AgentKind.OPENCODE})


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeAgentSettings:
    """How a native agent CLI is launched, frozen into the spec from `[agents.claude|codex]`
    (the model from `--agent claude:MODEL` when given)."""

    command: str
    model: str = ""
    max_turns: int = 50
    extra_args: tuple[str, ...] = ()
    base_url: str = ""  # codex: an OpenAI-compatible Responses endpoint
    env_key: str = "OPENAI_API_KEY"  # codex: the variable holding its API key
    mcp: bool = False  # offer agentctl's guarded tools as the MCP server `agentctl`
    prices: tuple[str, ...] = ()  # `MODEL=IN/OUT` (USD per million tokens) for the gateway


class Arming(StrEnum):
    """How a native agent's guard proves to the run's model gateway that it is loaded in the
    CLI's process; until it has, the gateway forwards none of the run's model requests."""

    SESSION_START = "session-start"  # the CLI's session-start hook reached the attempt
    HEADER = "header"  # each request carries `x-agentctl-guard: <nonce>` (a guard inside the CLI)


# How long a model request waits for the session-start hook before it is refused (Claude Code
# and Codex run that hook before their first request; this is for a machine under load);
# `[gateway] guard_hold_seconds`.
GUARD_HOLD_SECONDS = 10.0


class ModelApi(StrEnum):
    """The model API a `command:` agent speaks (`[agents.command] gateway`): through agentctl's
    model gateway it is given that vendor's base URL variables and a placeholder key."""

    NONE = "none"  # no gateway: the agent reaches its model itself
    ANTHROPIC = "anthropic"  # ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY
    OPENAI = "openai"  # OPENAI_BASE_URL (and OPENAI_API_BASE), OPENAI_API_KEY
    GEMINI = "gemini"  # GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY (generateContent)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandGateway:
    """`[agents.command]` frozen for a `command:` agent whose model requests go through the
    gateway: which API it speaks, and the prices its cost figures and budget use."""

    api: ModelApi
    prices: tuple[str, ...] = ()  # `MODEL=IN/OUT` (USD per million tokens)


@dataclass(frozen=True, slots=True)
class AgentSpec:
    kind: AgentKind
    value: str = ""  # the plan or diff file (absolute), the command line, or the model
    digest: str | None = None  # sha256 of the file the run was given, so a changed one is refused

    def describe(self) -> str:
        if self.kind is AgentKind.NOOP or (self.kind in NATIVE_KINDS and not self.value):
            return self.kind.value
        return f"{self.kind.value}:{self.value}"

    @classmethod
    def frozen(cls, described: str, digest: str | None) -> AgentSpec:
        """The spec as `describe` froze it into an ExecutionSpec (already validated then)."""
        kind, _, value = described.partition(":")
        return cls(AgentKind(kind), value, digest)

    def shared(self, repository: str) -> str:
        """The agent as others may read it (a PR body, a commit): a plan or diff file by its
        path in `repository`, else by its name and digest, never by a local absolute path."""
        path = PurePosixPath(self.value)
        if self.kind not in (AgentKind.SCRIPT, AgentKind.PATCH) or not path.is_absolute():
            return self.describe()
        root = PurePosixPath(repository)
        if root.is_absolute() and path.is_relative_to(root):
            return f"{self.kind.value}:{path.relative_to(root)}"
        return f"{self.kind.value}:{path.name}" + (f" ({self.digest})" if self.digest else "")
