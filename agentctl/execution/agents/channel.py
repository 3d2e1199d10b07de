"""The channel between an agent CLI and its attempt: the commands the CLI runs to reach the
attempt's socket (its hook, agentctl's MCP server), each with a key of its own, and the check of
every message against the source its key proves: a message no allowed source could have sent is
refused and recorded as a forged call."""

from __future__ import annotations

import importlib.util
import py_compile
import re
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from agentctl.execution.agents import AgentSession, AttemptIdentity
from agentctl.execution.agents.hook_socket import Source
from agentctl.hooks import hook, wire


def hook_command(agent: str, identity: AttemptIdentity, key: str,
                 native: Path | None = None) -> str:
    """The hook as the agent runs it (through sh): any failure to start becomes exit 2, which
    blocks. The compiled hook at `native` (`hook_binary`) when given and its arguments are
    ones it passes on; else `launch.py` of agentctl's own folder (the hook from its bytecode)
    without site, user site or PYTHON* variables: the workspace (the cwd) is never on its path,
    and it starts in a few ms."""

    arguments = [agent, "--socket", str(identity.private / wire.SOCKET_NAME),
                 "--attempt", identity.attempt_id, "--key", key]
    if native is not None and all(map(native_safe, arguments)):
        return f"{shlex.join([str(native), *arguments])}{FAIL_CLOSED}"
    launcher = Path(hook.__file__).with_name("launch.py")
    compiled(Path(hook.__file__), Path(wire.__file__))
    argv = [sys.executable, "-E", "-s", "-S", str(launcher), *arguments]
    return f"{shlex.join(argv)}{FAIL_CLOSED}"


# What the compiled hook puts in its request's JSON strings unescaped (hook.c's `safe`).
NATIVE_SAFE = re.compile(r"[A-Za-z0-9_./+:@,=~%-]+")


def native_safe(value: str) -> bool:
    return NATIVE_SAFE.fullmatch(value) is not None


def compiled(*sources: Path) -> None:
    """Each module's bytecode cached beside it (where this process, or a `-B` run, left none,
    or an older one): the hook loads its two modules from it, twice per tool call, and inside
    the CLI's sandbox it cannot write it. Where agentctl's folder is read-only it compiles them
    on each start, as a script would."""
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        try:
            if cached.stat().st_mtime >= source.stat().st_mtime:
                continue
        except OSError:
            pass
        try:
            py_compile.compile(str(source), cfile=str(cached), doraise=True)
        except (OSError, py_compile.PyCompileError):
            continue


FAIL_CLOSED = " || exit 2"


def for_event(hook: str, event: str) -> str:
    """`hook` (as `hook_command` made it) answering `event` (`--event NAME`), for a CLI whose
    hook input does not name the event in agentctl's terms."""
    if not hook.endswith(FAIL_CLOSED) or not event.isidentifier():
        raise ValueError(f"not a hook command for --event {event!r}: {hook[:80]!r}")
    return f"{hook[:-len(FAIL_CLOSED)]} --event {event}{FAIL_CLOSED}"


def mcp_command(identity: AttemptIdentity, key: str) -> list[str]:
    return [sys.executable, "-I", "-m", "agentctl.hooks.mcp_server",
            "--socket", str(identity.private / wire.SOCKET_NAME),
            "--attempt", identity.attempt_id, "--key", key]



HOOK_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart",
                         "PreSkillShellCommand"})


def forgery(event: object, source: Source, message: Mapping[str, object],
             session: AgentSession) -> str | None:
    """Why a message cannot have come from the source allowed to send it, or None."""
    if source is Source.UNKNOWN:
        return ("a request with no key this attempt issued: neither its hook nor its MCP "
                "server sent it (forged)")
    if event == "tool":
        if session.settings is None or not session.settings.mcp:
            return ("a tool request over the hook socket, but this run offers no tools over "
                    "MCP: it did not come from agentctl's MCP server (forged)")
        if source is not Source.MCP:
            return ("a tool request with the hooks' key: only agentctl's MCP server asks for "
                    "tools (forged)")
        return None
    if event in HOOK_EVENTS and source is not Source.HOOK:
        return f"a {event} with the MCP server's key: only the CLI's hook reports calls (forged)"
    return None


def claimed_call(agent: str, message: Mapping[str, object]) -> tuple[str, dict[str, object]]:
    """The call a refused message claims, for the record: its tool and arguments."""
    tool, arguments = message.get("tool"), message.get("arguments")
    if message.get("event") == "tool":
        return (tool if isinstance(tool, str) else "tool",
                arguments if isinstance(arguments, dict) else {})
    payload = message.get("input")
    payload = payload if isinstance(payload, dict) else {}
    tool_input = payload.get("tool_input")
    return (f"{agent}.{payload.get('tool_name') or message.get('event')}",
            {"event": str(message.get("event")),
             **(tool_input if isinstance(tool_input, dict) else {})})
