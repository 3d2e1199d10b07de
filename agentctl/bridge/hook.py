"""`python -E -s -S .../agentctl/bridge/hook.py claude|codex --socket S --attempt A --lease L`
(or `python -m agentctl.bridge.hook`, `agentctl hook`): the PreToolUse/PostToolUse hook agentctl
installs into a native agent's private configuration.

It decides nothing itself and writes nothing: it forwards the hook's input to the attempt's own
process over the socket (the attempt's one writer records and decides, and refuses a stale
lease) and prints the decision in the agent's native format. It fails closed: any error
(bad input, no attempt listening, a lost lease, a crash) is one line on stderr and exit 2,
which both Claude Code and Codex take as "block"; any other non-zero code would fail open.
Imports stay within the standard library: this process starts twice per tool call, so the
adapters run it as a plain script without `site` (`-S`), which saves most of Python's start.
"""

from __future__ import annotations

import json
import socket
import sys

try:
    from agentctl.bridge import wire
except ImportError:  # run as a script without site-packages: its own folder is on the path
    import wire  # type: ignore[no-redef,import-not-found]

AGENTS = ("claude", "codex")
CONNECT_SECONDS = 10.0
# An `ask` rule in an interactive run waits for a person at the attempt's terminal.
REPLY_SECONDS = 3600.0


class HookError(Exception):
    """Why the hook denies: one line for the agent (and the person reading its log)."""


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except HookError as error:
        return _deny(str(error))
    except BaseException as error:  # noqa: BLE001 - fail closed, whatever happened
        return _deny(f"internal error: {type(error).__name__}: {error}")


def _main(argv: list[str]) -> int:
    agent, options = _arguments(argv)
    raw = sys.stdin.buffer.read(wire.MAX_MESSAGE_BYTES + 1)
    if len(raw) > wire.MAX_MESSAGE_BYTES:
        raise HookError("hook input is too large")
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise HookError("hook input is not JSON; expected the agent's PreToolUse or "
                        "PostToolUse object on stdin") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("tool_name"), str) \
            or not isinstance(payload.get("hook_event_name"), str):
        raise HookError("hook input lacks hook_event_name or tool_name; expected the agent's "
                        "PreToolUse or PostToolUse object on stdin")
    event = payload["hook_event_name"]
    reply = ask(options["--socket"], {
        "attempt": options["--attempt"], "lease": options["--lease"], "agent": agent,
        "event": event, "input": payload})
    if reply.get("refused"):  # not a decision on the call: the request itself was refused
        raise HookError(str(reply.get("reason") or "the attempt refused the request"))
    if event != "PreToolUse":
        if reply.get("ok") is not True:
            raise HookError(str(reply.get("reason") or "the attempt refused the result"))
        return 0
    decision, reason = reply.get("decision"), str(reply.get("reason") or "")
    if decision not in (wire.ALLOW, wire.DENY):
        raise HookError(reason or "the attempt gave no decision")
    sys.stdout.write(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": decision,
        "permissionDecisionReason": reason}}) + "\n")
    return 0


def _arguments(argv: list[str]) -> tuple[str, dict[str, str]]:
    if not argv or argv[0] not in AGENTS:
        raise HookError(f"usage: agentctl hook {'|'.join(AGENTS)} --socket PATH --attempt ID "
                        "--lease ID")
    options: dict[str, str] = {}
    rest = argv[1:]
    while rest:
        name, *rest = rest
        if name not in ("--socket", "--attempt", "--lease") or not rest:
            raise HookError(f"unexpected hook argument {name!r}; expected --socket, --attempt "
                            "and --lease with values")
        options[name], *rest = rest
    missing = [name for name in ("--socket", "--attempt", "--lease") if not options.get(name)]
    if missing:
        raise HookError(f"no run to check this call against: missing {', '.join(missing)} "
                        "(the hook only works inside an agentctl run)")
    return argv[0], options


def ask(path: str, message: dict[str, object]) -> dict[str, object]:
    """One request to the attempt over its unix socket, one answer (the hook's and the MCP
    server's only way to reach the attempt's one writer)."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(CONNECT_SECONDS)
        try:
            connection.connect(path)
        except OSError as error:
            raise HookError(f"cannot reach the attempt at {path}: "
                            f"{error.strerror or error} (the run is over or was killed)") from None
        connection.settimeout(REPLY_SECONDS)
        wire.send(connection, message)
        try:
            return wire.receive(connection)
        except (OSError, ValueError) as error:
            raise HookError(f"the attempt gave no answer: {error}") from None
    finally:
        connection.close()


def _deny(reason: str) -> int:
    line = " ".join(reason.split())[:500]
    sys.stderr.write(f"agentctl: denied: {line}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
