"""agentctl's plugin for opencode fails closed: loaded by node (as opencode's runtime loads it)
against a real unix socket standing for the attempt, every way its exchange can go wrong
(no settings, nobody listening, a denial, a refusal, an unreadable answer, a connection closed
unanswered) is a throw, which opencode reads as "do not run this call". Only an explicit allow
lets the call run, with the attempt's replacement input put into opencode's own args object
(and the model's own arguments shown to the model in opencode's history)."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentctl.execution.agents.opencode import PLUGIN, SETTINGS

DRIVER = """
const guard = await import(process.argv[2]);
try {
  const hooks = await guard.AgentctlGuard({});
  console.log("LOADED");
  const args = {command: "echo hi", description: "d", timeout: 5};
  const given = args;
  await hooks["tool.execute.before"]({tool: "bash", sessionID: "s", callID: "c1"}, {args});
  console.log("ALLOWED " + JSON.stringify(args) + " same=" + (args === given));
  const headers = {};
  await hooks["chat.headers"]({}, {headers});
  console.log("HEADERS " + JSON.stringify(headers));
  const messages = [{info: {}, parts: [{type: "text"}, {type: "tool", callID: "c1",
                                         state: {status: "completed", input: args}}]}];
  await hooks["experimental.chat.messages.transform"]({}, {messages});
  console.log("SHOWN " + JSON.stringify(messages[0].parts[1].state.input));
  await hooks["tool.execute.after"]({tool: "bash", sessionID: "s", callID: "c1", args},
                                    {title: "t", output: "hi", metadata: {exit: 3}});
  console.log("AFTER");
} catch (error) {
  console.log("THROWN " + error.message);
}
"""


@dataclass
class Attempt:
    """A unix socket answering as the attempt would: the SessionStart acknowledged, then each
    request with the next scripted answer (raw bytes; b"" closes the connection unanswered)."""

    path: Path
    answers: list[bytes]
    received: list[dict[str, object]] = field(default_factory=list)

    def serve(self, server: socket.socket) -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                message = json.loads(data)
                self.received.append(message)
                if message["event"] == "SessionStart":
                    connection.sendall(b'{"ok":true}\n')
                elif self.answers:
                    connection.sendall(self.answers.pop(0))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An OPENCODE_CONFIG_DIR as agentctl lays it out: plugins/ and the settings beside."""
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    shutil.copyfile(PLUGIN, config / "plugins" / "agentctl-guard.js")
    (config / "plugins" / "package.json").write_text('{"type": "module"}')  # ESM for node
    (tmp_path / "driver.mjs").write_text(DRIVER)
    return config


def settings(folder: Path, socket_path: Path) -> None:
    (folder / SETTINGS).write_text(json.dumps({
        "socket": str(socket_path), "attempt": "att_1", "key": "hook-key", "guard": "nonce-1"}))


def drive(folder: Path) -> str:
    node = shutil.which("node")
    assert node is not None, "node is needed to load the plugin"
    result = subprocess.run([node, str(folder.parent / "driver.mjs"),
                             str(folder / "plugins" / "agentctl-guard.js")],
                            capture_output=True, text=True, timeout=60)
    return result.stdout + result.stderr


@pytest.fixture
def attempt(folder: Path) -> Iterator[Attempt]:
    path = folder.parent / "bridge.sock"
    served = Attempt(path, [])
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    thread = threading.Thread(target=served.serve, args=(server,), daemon=True)
    thread.start()
    settings(folder, path)
    try:
        yield served
    finally:
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)  # wakes the accept
        server.close()


def test_without_its_settings_the_plugin_fails_to_load(folder: Path) -> None:
    assert drive(folder).startswith("THROWN agentctl guard:"), drive(folder)


def test_with_no_attempt_listening_the_plugin_fails_to_load(folder: Path) -> None:
    settings(folder, folder / "nobody.sock")
    output = drive(folder)
    assert output.startswith("THROWN") and "cannot reach the attempt" in output, output


@pytest.mark.parametrize(("answer", "said"), [
    (b'{"decision":"deny","reason":"agentctl denied this call (rule: deny: curl *)"}\n',
     "deny: curl *"),
    (b'{"decision":"deny","ok":false,"refused":true,"reason":"forged"}\n', "forged"),
    (b'{"decision":"allow","refused":true,"reason":"refused after all"}\n', "refused after all"),
    (b'{"decision":"maybe"}\n', "no decision"),
    (b"not json\n", "unreadable"),
    (b'["allow"]\n', "unreadable"),
    (b'{"decision":"allow","updatedInput":"[1]"}\n', "not a JSON object"),
    (b'{"decision":"allow","updatedInput":"{nope"}\n', "unreadable"),
    (b"", "closed the connection"),
])
def test_anything_but_an_explicit_allow_is_a_throw(folder: Path, attempt: Attempt,
                                                   answer: bytes, said: str) -> None:
    attempt.answers.append(answer)
    output = drive(folder)
    assert output.startswith("LOADED\nTHROWN agentctl: denied:"), output
    assert said in output and "ALLOWED" not in output, output


def test_an_allow_puts_the_attempts_input_into_opencodes_own_args(
        folder: Path, attempt: Attempt) -> None:
    stub = {"command": "exec 3>/calls/x/cmd; cat /calls/x/out", "description": "d"}
    attempt.answers.append(json.dumps({"decision": "allow", "reason": "ok",
                                       "updatedInput": json.dumps(stub)}).encode() + b"\n")
    attempt.answers.append(b'{"ok":true}\n')  # the PostToolUse
    lines = drive(folder).splitlines()
    assert lines[0] == "LOADED", lines
    # the same object opencode runs the tool with, its keys the replacement's alone
    assert lines[1] == f"ALLOWED {json.dumps(stub, separators=(',', ':'))} same=true", lines
    headers = json.loads(lines[2].removeprefix("HEADERS "))
    assert headers == {"x-agentctl-guard": "nonce-1"}
    # opencode keeps the replacement in its history: its model is shown its own command
    assert lines[3] == 'SHOWN {"command":"echo hi","description":"d","timeout":5}', lines
    start, before, after = attempt.received
    assert (start["event"], start["key"], start["attempt"]) == ("SessionStart", "hook-key",
                                                                 "att_1")
    assert before["event"] == "PreToolUse" and before["agent"] == "opencode"
    assert before["input"] == {"hook_event_name": "PreToolUse", "tool_name": "bash",
                               "tool_input": {"command": "echo hi", "description": "d",
                                              "timeout": 5},
                               "tool_use_id": "c1"}
    assert after["event"] == "PostToolUse" and after["input"]["tool_response"] == {
        "output": "hi", "exit_code": 3}
