"""`python -E -s -S .../agentctl/hooks/launch.py AGENT --socket S --attempt A --key K` (AGENT:
claude, codex, copilot or gemini; or `python -m agentctl.hooks.hook`, `agentctl hook`): the
PreToolUse/PostToolUse hook agentctl installs into a native agent's private configuration.

It decides nothing itself and writes nothing: it forwards the hook's input to the attempt's own
process over the socket with the hooks' key (the attempt's one writer records and decides,
and refuses a key it did not issue to its hooks) and prints the decision in the agent's native
format, with the input the call runs with instead when the attempt replaced it (a shell command
becomes the stub that runs it in its own jail). It fails closed: any error
(bad input, no attempt listening, a lost lease, a crash) is one line on stderr and exit 2,
which Claude Code, Codex and Gemini CLI all take as "block"; any other non-zero code would
fail open (Gemini reads exit 1 as a warning and runs the call).
Imports stay within the standard library: this process starts twice per tool call, so the
adapters run it without `site` (`-S`), which saves most of Python's start, as the module `hook`
of its own folder (`launch.py`: from its cached bytecode). Not even `__future__`: its import is
a file read on every start.
"""

import sys

if __name__ != "hook":
    try:
        from agentctl.hooks import wire
    except ImportError:  # run as a script without site-packages: its own folder is the path
        import wire  # type: ignore[no-redef,import-not-found]
else:  # started by launch.py: its own folder is the path, and no package is looked for
    import wire  # type: ignore[no-redef]

# The C halves of `json` and `socket`: their Python modules import `re` and `enum`, which would
# double the hook's start (~25 ms on every tool call). Plain `json`/`socket` where they lack.
try:
    from _json import encode_basestring_ascii as _quoted
    from _json import make_scanner
except ImportError:  # pragma: no cover - not CPython
    from json.encoder import encode_basestring_ascii as _quoted
    from json.scanner import make_scanner
try:
    import _socket as sockets
except ImportError:  # pragma: no cover - not CPython
    import socket as sockets  # type: ignore[no-redef]

AGENTS = ("claude", "codex", "copilot", "gemini")
# Copilot CLI names the call `toolName` (its input names no event: `--event` does) and reads
# its own answer: `permissionDecision` at the top, a rewrite as `modifiedArgs`, and a deny
# also as exit 2 (each alone blocks; a non-empty answer without a decision would be "ask").
COPILOT = "copilot"
OPTIONS = ("--socket", "--attempt", "--key")
# `--event NAME`: the event this invocation answers, for a CLI whose hook input does not name
# it (each event then has a command of its own in agentctl's configuration of that CLI).
EVENT_OPTION = "--event"
# The CLI's session began with agentctl's configuration loaded: the guard proves it is live
# (no tool call; the attempt acknowledges it).
SESSION_START = "SessionStart"
PRE_TOOL_USE = "PreToolUse"
# The events the CLI waits on a decision for: a tool call, and (Claude Code after 2.1.240) a
# shell command a skill or slash command embeds, which is no tool call
DECISION_EVENTS = (PRE_TOOL_USE, "PreSkillShellCommand")
CONNECT_SECONDS = 10.0
# An `ask` rule in an interactive run waits for a person at the attempt's terminal.
REPLY_SECONDS = 3600.0
JSON_SPACE = " \t\n\r"


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
    payload = json_object(raw)
    if payload is None:
        raise HookError("hook input is not a JSON object; expected the agent's PreToolUse or "
                        "PostToolUse object on stdin")
    event = checked_event(agent, options.get(EVENT_OPTION), payload)
    # The input travels as the agent wrote it (it is one whole JSON object, so it cannot add
    # keys to the request; its newlines are whitespace, since strict JSON strings escape them).
    request = b"".join([
        b'{"attempt":', _json_text(options["--attempt"]), b',"key":',
        _json_text(options["--key"]), b',"agent":', _json_text(agent), b',"event":',
        _json_text(event), b',"input":', raw.strip(JSON_SPACE.encode()).replace(b"\n", b" ")
        .replace(b"\r", b" "), b"}\n"])
    reply = json_object(exchange(options["--socket"], request))
    if reply is None:
        raise HookError("the attempt's answer is not a JSON object")
    code, out, err = answer(agent, event, reply)
    sys.stdout.buffer.write(out)
    if err:
        sys.stdout.buffer.flush()
        sys.stderr.write(err)
    return code


def checked_event(agent: str, named: str | None, payload: dict[str, object]) -> str:
    """The event the input answers (`--event`, else the input's own name for it); HookError
    when it names none, or a tool call without its tool."""
    event = named or payload.get("hook_event_name")
    tool = payload.get("toolName" if agent == COPILOT else "tool_name")
    if not isinstance(event, str) or (event != SESSION_START and not isinstance(tool, str)):
        raise HookError("hook input lacks hook_event_name or tool_name; expected the agent's "
                        "PreToolUse or PostToolUse object on stdin")
    return event


def answer(agent: str, event: str, reply: dict[str, object]) -> tuple[int, bytes, str]:
    """The attempt's reply as the CLI reads it: the exit code, stdout and stderr (the one
    `denied` line, or nothing). HookError when the reply is no answer to the call. The native
    hook gets these three made by the attempt (`native` requests), so both hooks answer alike."""
    if reply.get("refused"):  # not a decision on the call: the request itself was refused
        raise HookError(str(reply.get("reason") or "the attempt refused the request"))
    if event not in DECISION_EVENTS:  # a result or the session's start: acknowledged
        if reply.get("ok") is not True:
            raise HookError(str(reply.get("reason") or "the attempt refused the result"))
        return 0, b"", ""
    decision, reason = reply.get("decision"), str(reply.get("reason") or "")
    if decision not in (wire.ALLOW, wire.DENY):
        raise HookError(reason or "the attempt gave no decision")
    updated = b""  # a skill's shell command takes none: any value would block it
    if decision == wire.ALLOW and reply.get("updatedInput") is not None \
            and event == PRE_TOOL_USE:
        text = reply.get("updatedInput")  # a JSON object's text: passed on as it is
        if not isinstance(text, str) or json_object(text.encode()) is None:
            raise HookError("the attempt's replacement input is not a JSON object")
        updated = text.encode()
    if agent == COPILOT:
        if updated:
            updated = b',"modifiedArgs":' + updated
        out = b"".join([
            b'{"permissionDecision":', _json_text(str(decision)),
            b',"permissionDecisionReason":', _json_text(reason), updated, b"}\n"])
        if decision == wire.DENY:
            return 2, out, denied_line(reason)
        return 0, out, ""
    if agent == "gemini":
        return _gemini_answer(str(decision), reason, updated)
    if updated:
        updated = b',"updatedInput":' + updated
    return 0, b"".join([
        b'{"hookSpecificOutput":{"hookEventName":', _json_text(event), b',"permissionDecision":',
        _json_text(str(decision)), b',"permissionDecisionReason":', _json_text(reason),
        updated, b"}}\n"]), ""


def _gemini_answer(decision: str, reason: str, updated: bytes) -> tuple[int, bytes, str]:
    """Gemini CLI's BeforeTool answer: a denial both ways (its JSON and exit 2), an allowed
    call with the input it runs with instead (merged over the model's, key by key)."""
    if decision == wire.DENY:
        return 2, b'{"decision":"deny","reason":' + _json_text(reason) + b"}\n", \
            denied_line(reason)
    rewrite = (b',"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":' + updated
               + b"}") if updated else b""
    return 0, b'{"decision":"allow"' + rewrite + b"}\n", ""


def _arguments(argv: list[str]) -> tuple[str, dict[str, str]]:
    if not argv or argv[0] not in AGENTS:
        raise HookError(f"usage: agentctl hook {'|'.join(AGENTS)} --socket PATH --attempt ID "
                        "--key KEY")
    options: dict[str, str] = {}
    rest = argv[1:]
    while rest:
        name, *rest = rest
        if name not in (*OPTIONS, EVENT_OPTION) or not rest:
            raise HookError(f"unexpected hook argument {name!r}; expected --socket, --attempt "
                            "and --key with values (and --event NAME)")
        options[name], *rest = rest
    missing = [name for name in OPTIONS if not options.get(name)]
    if EVENT_OPTION in options and not options[EVENT_OPTION].isidentifier():
        raise HookError(f"--event {options[EVENT_OPTION]!r} is not an event name")
    if missing:
        raise HookError(f"no run to check this call against: missing {', '.join(missing)} "
                        "(the hook only works inside an agentctl run)")
    return argv[0], options


def ask(path: str, message: dict[str, object]) -> dict[str, object]:
    """One request to the attempt as a dict, one answer (the MCP server's way to reach the
    attempt's one writer; it starts once per run, so plain `json` is fine)."""
    import json

    answer = json_object(exchange(path, json.dumps(message, separators=(",", ":")).encode()
                                  + b"\n"))
    if answer is None:
        raise HookError("the attempt's answer is not a JSON object")
    return answer


def exchange(path: str, request: bytes) -> bytes:
    """One request line to the attempt over its unix socket, one answer line."""
    connection = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    try:
        connection.settimeout(CONNECT_SECONDS)
        try:
            connection.connect(path)
        except OSError as error:
            raise HookError(f"cannot reach the attempt at {path}: "
                            f"{error.strerror or error} (the run is over or was killed)") from None
        connection.settimeout(REPLY_SECONDS)
        try:
            connection.sendall(request)
            answer = wire.read_line(connection)
        except (OSError, ValueError) as error:
            raise HookError(f"the attempt gave no answer: {error}") from None
        if not answer:
            raise HookError("the attempt gave no answer: it closed the connection")
        return answer
    finally:
        connection.close()


class _StrictJson:
    """The options `make_scanner` reads: plain JSON as `json.loads` takes it, minus NaN."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    memo: dict[str, object] = {}

    @staticmethod
    def parse_constant(name: str) -> object:
        raise ValueError(f"{name} is not JSON")


_scan = make_scanner(_StrictJson())  # type: ignore[arg-type]  # any object with its options


def json_object(data: bytes) -> dict[str, object] | None:
    """The one JSON object `data` holds, or None when it holds anything else."""
    try:
        text = data.decode()
        start = len(text) - len(text.lstrip(JSON_SPACE))
        value, end = _scan(text, start)
    except (ValueError, StopIteration, RecursionError):
        return None
    return value if isinstance(value, dict) and not text[end:].strip(JSON_SPACE) else None


def _json_text(value: str) -> bytes:
    return _quoted(value).encode()


def denied_line(reason: str) -> str:
    """The one stderr line of a denial."""
    return f"agentctl: denied: {' '.join(reason.split())[:500]}\n"


def _deny(reason: str) -> int:
    sys.stderr.write(denied_line(reason))
    return 2


if __name__ == "__main__":
    sys.exit(main())
