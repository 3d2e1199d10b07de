"""How a native agent CLI is started: its launch, its sandbox, what it is told (the prompt, the
frozen spec), and what its jailed tool commands get of the attempt's environment."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import agentctl
from agentctl.domain.agent import GUARD_HOLD_SECONDS
from agentctl.execution.agents import AgentSession
from agentctl.execution.gateway.keys import KEY_VARIABLES, URL_VARIABLES
from agentctl.execution.process import ProcessResult, run_to_file
from agentctl.execution.sandboxing.sandbox import loopback_forwards, program_dirs
from agentctl.hooks import wire

if TYPE_CHECKING:
    from agentctl.execution.sandboxing.sandbox import Jail


@dataclass(frozen=True, slots=True)
class Launch:
    argv: Sequence[str]
    env: Mapping[str, str]
    # what else its sandbox shows it, read-only (a cache of its own it shares across attempts)
    read_only: tuple[Path, ...] = ()


def launch_agent(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, output: Path,
                 timeout: float, should_stop: Callable[[], bool],
                 jail: Jail | None = None) -> ProcessResult:
    """Start the agent CLI and wait for it: the one place that launches an agent CLI. In its
    jail, bubblewrap's pid namespace dies with agentctl, so a `kill -9` of agentctl leaves no
    orphan; unsandboxed, the guardian does that."""
    if jail is None:
        argv = [sys.executable, "-I", "-m", "agentctl.execution.agents.guardian", "--", *argv]
    return run_to_file(argv, cwd=cwd, env=env, output=output, timeout=timeout,
                       should_stop=should_stop, confine=jail)


def agent_jail(session: AgentSession, launch: Launch, home: Path,
               endpoints: Sequence[str]) -> Jail | None:
    """The CLI's sandbox: the workspace, its private home (HOME, and CODEX_HOME where it
    lives) read-write, the hook socket, its program, agentctl (for the hook and the MCP server)
    and the task file read-only, and only its model endpoints reachable."""

    sandbox, identity = session.sandbox, session.identity
    if sandbox is None or identity is None:
        return None
    program = program_dirs(str(launch.argv[0]), launch.env.get("PATH", ""))
    return sandbox.jail(
        session.workspace, allow=endpoints, home=home, forward=loopback_forwards(endpoints),
        read_only=(session.task_file, *program, Path(agentctl.__file__).parent,
                   *named_files(launch.argv[1:]), *launch.read_only),
        writable=(home, identity.private / wire.SOCKET_NAME))


def named_files(words: Sequence[str]) -> tuple[Path, ...]:
    """Files the operator's launch settings name by absolute path (`extra_args` such as
    `-c model_catalog_json="/path"`), to be visible read-only; never a dotfile."""
    out = []
    for word in words:
        text = word.rpartition("=")[2].strip("\"'")
        if not text.startswith("/") or "\n" in text:
            continue
        path = Path(text)
        if path.is_file() and not any(part.startswith(".") for part in path.parts[1:]):
            out.append(path)
    return tuple(dict.fromkeys(out))




def tool_env(env: Mapping[str, str]) -> dict[str, str]:
    """What a jailed tool command gets: the attempt's environment without the model's base
    URLs and keys (the gateway is the CLI's alone)."""

    return {name: value for name, value in env.items()
            if name not in (*KEY_VARIABLES, *URL_VARIABLES, "CODEX_HOME")}


def frozen_spec(session: AgentSession) -> dict[str, Any]:
    """The frozen ExecutionSpec as the task file gives it to the agent."""
    try:
        spec = json.loads(session.task_file.read_text()).get("executionSpec", {})
    except (OSError, ValueError):
        return {}
    return spec if isinstance(spec, dict) else {}


def guard_hold(budget: Mapping[str, object]) -> float:
    """The run's `[gateway] guard_hold_seconds`, frozen into its budget (a run created before
    the key had none: the default)."""
    hold = budget.get("guardHoldSeconds")
    if isinstance(hold, (int, float)) and not isinstance(hold, bool) and hold > 0:
        return float(hold)
    return GUARD_HOLD_SECONDS


def prompt_for(session: AgentSession) -> str:
    """The task's instruction and the frozen spec's rules, as the agent is told them."""
    spec = frozen_spec(session)
    boundary = spec.get("patchBoundary", {})
    checks = [check.get("command") for check in spec.get("verificationPlan", {}).get("checks", [])]
    budget = spec.get("budget", {})
    lines = [session.instruction.strip(), "",
             "You work inside agentctl, which checks and records every tool call.",
             f"Workspace: {session.workspace}"]
    if boundary.get("allowedPaths"):
        lines.append(f"Allowed paths: {', '.join(boundary['allowedPaths'])}")
    if boundary.get("forbiddenPaths"):
        lines.append(f"Forbidden paths (never write them): {', '.join(boundary['forbiddenPaths'])}")
    if checks:
        lines.append(f"Verification commands agentctl runs afterwards: {'; '.join(map(str, checks))}")
    lines.append(f"Budget: {budget.get('maxToolCalls')} tool calls, "
                 f"{budget.get('wallSeconds')} s" + (
                     f", ${budget['maxCostUsd']}" if budget.get("maxCostUsd") else "") + (
                     f", {budget['maxTokens']} tokens" if budget.get("maxTokens") else ""))
    lines.append("A denied call says which rule denied it; do not try to work around it.")
    return "\n".join(lines)




def collector_endpoints(env: Mapping[str, str]) -> tuple[str, ...]:
    """`host:port` of the OTLP collector the run's trace goes to (set only when it is traced):
    the agent sends its own spans there."""

    parts = urlsplit(env.get("OTEL_EXPORTER_OTLP_ENDPOINT", ""))
    if not parts.hostname:
        return ()
    return (f"{parts.hostname}:{parts.port or (80 if parts.scheme == 'http' else 443)}",)
