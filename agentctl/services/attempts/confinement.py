"""The sandbox of one attempt, as the pipeline uses it: a jail for each process it spawns, and
every connection that process tried recorded as a `net.connect` ToolCall naming the step that
made it.

The proxy only collects attempts (on its own thread); they are recorded here, on the pipeline's
thread, through the attempt's ledger, once the process is over.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from agentctl.domain.enums import ToolDecision, ToolOutcome
from agentctl.domain.redaction import Redactor
from agentctl.domain.sandbox import NET_CONNECT
from agentctl.domain.step import ToolResult
from agentctl.execution.sandboxing.sandbox import Jail, Sandbox, loopback_forwards, model_endpoints
from agentctl.services.ports import AttemptLedger, CallRequest


def record_connections(ledger: AttemptLedger, jail: Jail | None, *, made_by: str,
                       process: str, redactor: Redactor) -> int:
    """One `net.connect` ToolCall per connection attempt of the jailed process; how many."""
    if jail is None:
        return 0
    for attempt in jail.connections:
        arguments = json.dumps({"host": attempt.host, "port": attempt.port, "madeBy": made_by,
                                "process": redactor.clean(process)[:200]}, sort_keys=True)
        where = f"{attempt.host}:{attempt.port}"
        if not attempt.allowed:
            ledger.finished_call(CallRequest(
                tool=NET_CONNECT, arguments_json=arguments,
                decision=ToolDecision.DENIED_BY_POLICY, matched_rule=None,
                denial_reason=f"the sandbox blocked {where}: {attempt.reason}",
                requested_at=attempt.at), None)
            continue
        result = ToolResult(outcome=ToolOutcome.OK, output=f"connected to {where}") \
            if attempt.reason is None else ToolResult(outcome=ToolOutcome.FAILED,
                                                      error=f"{where}: {attempt.reason}")
        ledger.finished_call(CallRequest(
            tool=NET_CONNECT, arguments_json=arguments, decision=ToolDecision.ALLOWED,
            matched_rule=attempt.rule, denial_reason=None, requested_at=attempt.at), result)
    count = len(jail.connections)
    jail.connections.clear()
    return count


def named_paths(command: str | Sequence[str], hidden: Iterable[Path]) -> tuple[Path, ...]:
    """Existing files an operator's command line names by absolute path (an agent script, a
    judge; for a venv's interpreter, its venv), to be visible read-only inside; never one in a
    place the sandbox hides on purpose beyond /tmp and the homes' non-dot dirs (the state
    home, the original repository)."""
    try:
        words = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError:
        words = str(command).split()
    kept = tuple(hidden)
    out: list[Path] = []
    for word in words:
        text = word.partition("=")[2] if word.startswith("-") and "=" in word else word
        if not text.startswith("/"):
            continue
        path = Path(os.path.abspath(text))
        if not path.is_file():
            continue
        venv = _venv_of(path)
        if venv is not None:  # a venv's interpreter runs only with its venv (`.venv` too)
            path = venv
        elif any(part.startswith(".") for part in path.parts[2:]):
            continue  # dotfiles and dot dirs (~/.ssh/...) are never handed over by name
        if any(path.is_relative_to(place) for place in kept):
            continue
        out.append(path)
    return tuple(dict.fromkeys(out))


def _venv_of(program: Path) -> Path | None:
    """The virtual environment whose `bin/` holds `program` (it has a `pyvenv.cfg`), if any."""
    venv = program.parent.parent
    if program.parent.name != "bin" or not (venv / "pyvenv.cfg").is_file():
        return None
    return venv


def agent_jail(sandbox: Sandbox | None, *, workspace: Path, command: str, env: Mapping[str, str],
               home: Path, task_file: Path, protected: Iterable[Path]) -> Jail | None:
    """The agent process: its workspace, a home of its own that lasts the attempt, the task file
    and its program read-only, and its model endpoint reachable."""

    if sandbox is None:
        return None
    home.mkdir(exist_ok=True)
    endpoints = model_endpoints(env)
    return sandbox.jail(workspace, allow=endpoints, home=home,
                        read_only=(task_file, *named_paths(command, protected)),
                        forward=loopback_forwards(endpoints))
