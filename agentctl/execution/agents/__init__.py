"""Agents: adapters behind one small interface; agentctl never depends on a model vendor.

An agent acts only through what its session gives it: `tools.call(...)` for every side effect
(guarded and recorded), and `step(...)` to record work that is not a tool call (applying a
given patch). It reports how it ended; the patch is read from the workspace afterwards.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentctl.domain.agent import AgentKind, AgentSpec, NativeAgentSettings
from agentctl.domain.enums import StepType
from agentctl.domain.step import ToolResult

if TYPE_CHECKING:
    from agentctl.domain.cassette import Cassette
    from agentctl.execution.gateway.server import Exchange
    from agentctl.execution.sandboxing.sandbox import Jail, Sandbox


class Tools(Protocol):
    def call(self, tool: str, arguments: Mapping[str, object], *,
             title: str | None = None) -> ToolResult: ...
    @property
    def last_step_number(self) -> int:
        """The run tree's number of the step the latest call was recorded as."""
        ...


class StepHandle(Protocol):
    def fail(self, code: str, detail: str) -> None: ...
    def note(self, **attributes: object) -> None: ...


@dataclass(frozen=True, slots=True)
class NativeDecision:
    allow: bool
    reason: str


class NativeTools(Protocol):
    """The attempt's side of a native agent's hooks (services.attempts.native_calls.NativeCalls)."""

    def before(self, agent: str, payload: Mapping[str, object]) -> NativeDecision: ...
    def after(self, agent: str, payload: Mapping[str, object], *, failed: bool) -> None: ...
    def close_pending(self) -> None: ...
    def settle(self) -> None: ...
    def spent(self, *, cost_usd: float, tokens: int) -> None: ...
    def over_budget(self) -> str | None: ...
    def unhooked_changes(self) -> str | None: ...
    def run_tool(self, tool: str, arguments: Mapping[str, object],
                 ) -> tuple[ToolResult, str, str | None]: ...
    def forged(self, tool: str, arguments: Mapping[str, object], why: str) -> None: ...
    def exchange(self, exchange: Exchange) -> None: ...
    def command_finished(self, command: str, exit_code: int | None) -> None: ...
    def report(self, stream: Path, report: Mapping[str, object]) -> None: ...
    def network(self, jail: Jail, *, agent: str, command: str) -> None: ...


@dataclass(frozen=True, slots=True)
class AttemptIdentity:
    """Where a native agent's hooks reach the attempt, and the attempt every message names
    (each source proves itself with its own key, `hook_socket.Credentials`; the lease stays out of
    the CLI's reach)."""

    private: Path  # the attempt's private directory (holds the socket and the agent's home)
    attempt_id: str


@dataclass(frozen=True, slots=True)
class AgentSession:
    instruction: str
    workspace: Path
    task_file: Path  # JSON with the task and the execution spec, outside the workspace
    tools: Tools
    step: Callable[[StepType, str], AbstractContextManager[StepHandle]]
    should_stop: Callable[[], bool]
    env: Mapping[str, str] = field(default_factory=dict)
    native: NativeTools | None = None  # for claude/codex: the hook's counterpart
    identity: AttemptIdentity | None = None
    settings: NativeAgentSettings | None = None
    wall_seconds: Callable[[], float] = lambda: 3600.0  # what is left of the wall budget
    sandbox: Sandbox | None = None  # the attempt's; None when the run is unsandboxed
    cassette: Cassette | None = None  # a replay: the model answers from this recording
    hook_cache: Path | None = None  # where the compiled hook is built (agentctl's home)


@dataclass(frozen=True, slots=True)
class AgentOutcome:
    error: str | None = None  # the agent could not complete; None when it finished its work
    # what the judge should weigh about how it ran (its own spend claims that disagree with
    # what its model gateway measured)
    warnings: tuple[str, ...] = ()
    # agentctl's own machinery failed, not the agent (its guard never proved itself loaded):
    # the run ends FAILED_INFRASTRUCTURE with this reason, nothing of the workspace judged
    infrastructure: str | None = None


class Agent(Protocol):
    def run(self, session: AgentSession) -> AgentOutcome: ...


class NoopAgent:
    """Changes nothing: for checking the verifier and the plumbing."""

    def run(self, session: AgentSession) -> AgentOutcome:
        return AgentOutcome()


# Each kind's adapter by module and class: its module imports this package (AgentSession,
# AgentOutcome), so it cannot be imported here at the top, and only the kind a run uses is loaded.
_ADAPTERS: dict[AgentKind, tuple[str, str]] = {
    AgentKind.SCRIPT: ("script", "ScriptAgent"),
    AgentKind.PATCH: ("patch", "PatchAgent"),
    AgentKind.COMMAND: ("command", "CommandAgent"),
    AgentKind.CLAUDE: ("claude", "ClaudeAgent"),
    AgentKind.CODEX: ("codex", "CodexAgent"),
    AgentKind.COPILOT: ("copilot", "CopilotAgent"),
    AgentKind.GEMINI: ("gemini", "GeminiAgent"),
    AgentKind.OPENCODE: ("opencode", "OpencodeAgent"),
}


def build_agent(spec: AgentSpec) -> Agent:
    """The agent of `spec`'s kind; only its own module is imported (a native agent's pulls in
    its hook socket and gateway, which a patch or a script never needs)."""
    if spec.kind is AgentKind.NOOP:
        return NoopAgent()
    module, name = _ADAPTERS[spec.kind]
    adapter: Callable[[AgentSpec], Agent] = getattr(
        importlib.import_module(f"{__name__}.{module}"), name)
    return adapter(spec)
