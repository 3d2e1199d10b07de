"""Scripted fake model servers: the Anthropic Messages API and the OpenAI Responses API, on
127.0.0.1, answering pre-written turns over SSE.

This is the one fake in the agent tests, and it stands at the one boundary agentctl does not
own: the model vendor's API. Everything else (Claude Code, Codex, agentctl, git, the hook) is
the real thing. It can also answer as a vendor in trouble (`Fault`: 429, 529, 500, a dropped
connection, silence), and notes every request whatever its path (`seen`). A turn is picked
by counting the assistant turns already in the request (both CLIs resend the whole history),
so the server holds no conversation state of its own.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Call:
    """A tool call: Claude's `name` and `input`; for Codex a function (`exec_command`), a custom
    tool (`apply_patch` with `input` as the patch text) or an MCP tool (`namespace`)."""

    name: str
    input: dict[str, Any] | str
    namespace: str | None = None


Turn = Sequence[Text | Call]


@dataclass(frozen=True)
class Fault:
    """A vendor fault instead of an answer: a status (429, 529, 500...) with its headers; or
    `hang` seconds of silence; or `drop`, the connection closed with no answer."""

    status: int = 500
    headers: tuple[tuple[str, str], ...] = ()
    hang: float = 0.0
    drop: bool = False


@dataclass
class Script:
    turns: Sequence[Turn]
    usage: tuple[int, int] = (1200, 300)  # input and output tokens reported per turn
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)  # of each request, as received
    chunk: int = 0  # stream a Text in deltas of this many characters (0: one delta)
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of each request
    # called with each request before it is answered: a test may hold an answer back until
    # something it waits for happened (a file its agent's process writes)
    hold: Callable[[dict[str, Any]], None] | None = None
    paths: list[str] = field(default_factory=list)  # of each scripted request

    def turn(self, number: int) -> Turn:
        return self.turns[number] if number < len(self.turns) else [Text("done")]


class FakeModel:
    """A server on an ephemeral port; `script` may be swapped between runs."""

    def __init__(self, render: Callable[[Script, dict[str, Any]], Iterator[bytes]],
                 scripted: tuple[str, ...] = ("/v1/messages", "/v1/responses")) -> None:
        self.script = Script([])
        self._render = render
        self.scripted = scripted  # the paths answered from the script
        # every request that arrived, whatever its path: (method, target, headers)
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.seen_at: list[float] = []  # time.monotonic() of each
        self.faults: list[Fault] = []  # the next requests' answers, one each, before the script
        self.always: Fault | None = None  # every request's answer once `faults` are used up
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as the vendors' front ends do

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if not self._faulted():
                    self._send(200, b"{}", "application/json")

            def do_HEAD(self) -> None:  # noqa: N802
                if not self._faulted():
                    self._send(200, b"", "application/json")

            def _faulted(self) -> bool:
                """Noted as seen; True when a scripted fault answered it."""
                owner.seen.append((self.command, self.path,
                                   {k.lower(): v for k, v in self.headers.items()}))
                owner.seen_at.append(time.monotonic())
                fault = owner.faults.pop(0) if owner.faults else owner.always
                if fault is None:
                    return False
                if fault.hang:
                    time.sleep(fault.hang)
                if fault.drop or fault.hang:
                    self.close_connection = True
                    self.connection.close()
                    return True
                data = json.dumps({"type": "error", "error": {
                    "type": "overloaded_error", "message": f"fake {fault.status}"}}).encode()
                self.send_response(fault.status)
                for name, value in fault.headers:
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return True

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if self._faulted():
                    return
                body = json.loads(raw or b"{}")
                if not self.path.startswith(owner.scripted) or "count_tokens" in self.path:
                    self._send(200, json.dumps({"input_tokens": 10}).encode(),
                               "application/json")
                    return
                owner.script.requests.append(body)
                owner.script.headers.append({k.lower(): v for k, v in self.headers.items()})
                owner.script.arrivals.append(time.monotonic())
                if owner.script.hold is not None:
                    owner.script.hold(body)
                owner.script.paths.append(self.path)
                chunks = list(owner._render(owner.script, body))
                whole = not chunks[0].startswith((b"event:", b"data:"))  # a JSON body
                self.send_response(200)
                self.send_header("content-type",
                                 "application/json" if whole else "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("content-length", str(sum(len(c) for c in chunks)))
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(chunk)
                self.wfile.flush()

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket.setblocking(False)  # an aborted client never leaves accept blocking
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


# --- Anthropic Messages ---------------------------------------------------------------------

def anthropic_turn_number(body: dict[str, Any]) -> int:
    return sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")


_CWD = re.compile(r"[Ww]orking directory: (/[^\s\\\"]+)")


def working_directory(body: dict[str, Any]) -> str:
    """The agent's cwd as its system prompt states it (Claude Code after 2.1.240: its first
    messages): scripted paths say `{cwd}`."""
    found = _CWD.search(json.dumps(body.get("system", "")) + json.dumps(body.get("instructions", ""))
                        + json.dumps(body.get("input", ""))[:20000]
                        + json.dumps(body.get("messages", [])[:3]))
    return found.group(1) if found else ""


_SESSION = re.compile(r"session ID (\d+)")


def _filled(value: Any, cwd: str, session: int | None = None) -> Any:
    """`{cwd}` in a scripted string, and a value `"{session}"` as the last interactive
    session id Codex reported (an int), so a script can type into the session it opened."""
    if value == "{session}" and session is not None:
        return session
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, dict):
        return {key: _filled(item, cwd, session) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item, cwd, session) for item in value]
    return value


def render_anthropic(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    number = anthropic_turn_number(body)
    cwd = working_directory(body)
    turn = [Call(b.name, _filled(b.input, cwd), b.namespace) if isinstance(b, Call) else b
            for b in script.turn(number)]
    tokens_in, tokens_out = script.usage
    yield _sse("message_start", {"type": "message_start", "message": {
        "id": f"msg_{number}", "type": "message", "role": "assistant",
        "model": body.get("model", "claude-sonnet-4-5"), "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": tokens_in, "output_tokens": 1}}})
    stop = "end_turn"
    for index, block in enumerate(turn):
        if isinstance(block, Text):
            yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {"type": "text", "text": ""}})
            size = script.chunk or len(block.text) or 1
            for start in range(0, len(block.text), size):
                yield _sse("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": block.text[start:start + size]}})
        else:
            stop = "tool_use"
            yield _sse("content_block_start", {
                "type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": f"toolu_{number}_{index}",
                                  "name": block.name, "input": {}}})
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "input_json_delta",
                                                         "partial_json": json.dumps(block.input)}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": tokens_out}})
    yield _sse("message_stop", {"type": "message_stop"})


def anthropic_server() -> FakeModel:
    return FakeModel(render_anthropic)


def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool_result the CLI sent back (what the model was told)."""
    texts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    texts.append(" ".join(str(part.get("text", "")) for part in inner))
                else:
                    texts.append(str(inner))
    return texts


# --- OpenAI Responses -----------------------------------------------------------------------

def openai_turn_number(body: dict[str, Any]) -> int:
    """Assistant turns so far: one per model turn that ended in tool calls or a message."""
    turns = 0
    previous_was_model = False
    for item in body.get("input", []):
        kind = item.get("type")
        from_model = kind in ("function_call", "custom_tool_call", "reasoning") or (
            kind == "message" and item.get("role") == "assistant")
        if from_model and not previous_was_model:
            turns += 1
        previous_was_model = from_model
    return turns


def render_openai(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
    number = openai_turn_number(body)
    cwd = working_directory(body)
    sessions = _SESSION.findall(" ".join(function_outputs(body)))
    session = int(sessions[-1]) if sessions else None
    turn = [Call(b.name, _filled(b.input, cwd, session), b.namespace)
            if isinstance(b, Call) else b for b in script.turn(number)]
    tokens_in, tokens_out = script.usage
    response = {"id": f"resp_{number}", "object": "response", "status": "in_progress",
                "model": body.get("model", "fake-model"), "output": []}
    yield _sse("response.created", {"type": "response.created", "response": response})
    outputs = []
    for index, block in enumerate(turn):
        if isinstance(block, Text):
            item: dict[str, Any] = {"type": "message", "id": f"msg_{number}_{index}",
                                    "role": "assistant", "status": "completed",
                                    "content": [{"type": "output_text", "text": block.text,
                                                 "annotations": []}]}
        elif isinstance(block.input, str):
            item = {"type": "custom_tool_call", "id": f"ctc_{number}_{index}",
                    "call_id": f"call_{number}_{index}", "name": block.name,
                    "input": block.input, "status": "completed"}
        else:
            item = {"type": "function_call", "id": f"fc_{number}_{index}",
                    "call_id": f"call_{number}_{index}", "name": block.name,
                    "arguments": json.dumps(block.input), "status": "completed"}
            if block.namespace:
                item["namespace"] = block.namespace
        outputs.append(item)
        yield _sse("response.output_item.added", {"type": "response.output_item.added",
                                                  "output_index": index, "item": item})
        yield _sse("response.output_item.done", {"type": "response.output_item.done",
                                                 "output_index": index, "item": item})
    done = {**response, "status": "completed", "output": outputs,
            "usage": {"input_tokens": tokens_in, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": tokens_out,
                      "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": tokens_in + tokens_out}}
    yield _sse("response.completed", {"type": "response.completed", "response": done})


def openai_server() -> FakeModel:
    return FakeModel(render_openai)


def function_outputs(body: dict[str, Any]) -> list[str]:
    """The output of every tool call Codex sent back."""
    return [str(item.get("output")) for item in body.get("input", [])
            if item.get("type") in ("function_call_output", "custom_tool_call_output")]
