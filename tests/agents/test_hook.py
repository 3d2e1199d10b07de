"""The hook fails closed: bad input, no run behind it, another attempt or a key the attempt did
not issue to its hooks all deny with exit 2 and one line; another attempt's reaches nothing.
Each such test runs both hooks (`client`): the Python one and the compiled one (hook.c)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.execution.agents import AttemptIdentity
from agentctl.execution.agents.channel import hook_command
from agentctl.execution.agents.hook_binary import native_hook
from agentctl.execution.agents.hook_socket import BridgeServer, Credentials, Source
from agentctl.hooks import hook as hook_module
from agentctl.hooks import wire
from tests.conftest import AGENTCTL

PRE = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
       "tool_input": {"command": "echo hi"}, "tool_use_id": "toolu_1"}


PYTHON_HOOK = [sys.executable, "-I", "-m", "agentctl.hooks.hook"]
# the hook `hook()` starts: the Python module, or the compiled hook while `client` says so
STARTED: list[list[str]] = [PYTHON_HOOK]


def hook(stdin: str, *args: str, via_cli: bool = False) -> subprocess.CompletedProcess[str]:
    command = [AGENTCTL, "hook"] if via_cli else STARTED[-1]
    return subprocess.run([*command, *args], input=stdin, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture(scope="session")
def native_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled hook, built as a run builds it (once for the session)."""
    choice = native_hook(tmp_path_factory.mktemp("hook-cache"), os.environ)
    if choice.binary is None:
        pytest.skip(choice.why)
    return choice.binary


@pytest.fixture(params=["python", "native"])
def client(request: pytest.FixtureRequest) -> Iterator[str]:
    """Which hook the test's `hook()` calls start: both must answer and deny alike."""
    if request.param == "native":
        STARTED.append([str(request.getfixturevalue("native_binary"))])
    yield str(request.param)
    del STARTED[1:]


@pytest.mark.parametrize("via_cli", [False, True])
@pytest.mark.parametrize("stdin", ["not json", "[]", '{"tool_name": "Bash"}', "",
                                   json.dumps(PRE) + " {}", json.dumps(PRE)[:-1],
                                   json.dumps({**PRE, "n": float("nan")})])
def test_malformed_hook_input_denies_with_exit_2_and_one_line(stdin: str, via_cli: bool,
                                                              tmp_path: Path) -> None:
    result = hook(stdin, "claude", "--socket", str(tmp_path / "s"), "--attempt", "a",
                  "--key", "l", via_cli=via_cli)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("agentctl: denied:")


@pytest.mark.parametrize("stdin", ["not json", "[]", '{"tool_name": "Bash"}', "",
                                   json.dumps(PRE) + " {}", json.dumps(PRE)[:-1],
                                   json.dumps({**PRE, "n": float("nan")}),
                                   json.dumps(PRE) + ', "event": {}',
                                   json.dumps(PRE) + ', "attempt": "attempt_A", "x": {}'])
def test_malformed_hook_input_to_a_live_attempt_denies_and_reaches_nothing(
        attempt: Attempt, client: str, stdin: str) -> None:
    """What the Python hook refuses itself, the attempt refuses for the compiled one (which
    parses no JSON): an input that is not one object cannot add or shadow request fields."""
    result = hook(stdin, "claude", "--socket", str(attempt.server.path), "--attempt",
                  "attempt_A", "--key", "key_hook")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("agentctl: denied:")
    assert attempt.reached == []


@pytest.mark.parametrize("args", [(), ("codex",), ("claude", "--socket"),
                                  ("aider", "--socket", "x", "--attempt", "a", "--key", "l"),
                                  ("claude", "--socket", "x", "--attempt", "a", "--key", "l",
                                   "--bogus", "1")])
def test_a_hook_without_its_run_denies(args: tuple[str, ...], client: str) -> None:
    result = hook(json.dumps(PRE), *args)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1


def test_a_hook_whose_attempt_is_gone_denies(tmp_path: Path, client: str) -> None:
    result = hook(json.dumps(PRE), "claude", "--socket", str(tmp_path / "bridge.sock"),
                  "--attempt", "attempt_1", "--key", "key_1")
    assert result.returncode == 2
    assert "cannot reach the attempt" in result.stderr and "killed" in result.stderr


KEYS = Credentials(hook="key_hook", mcp="key_mcp")


class Attempt:
    """A real attempt-side socket; what reached its handler is kept, with its source."""

    def __init__(self, root: Path) -> None:
        self.reached: list[dict[str, object]] = []
        self.sources: list[Source] = []
        self.answer: dict[str, object] = {"decision": "allow", "reason": "ok"}
        self.server = BridgeServer(AttemptIdentity(root, "attempt_A"),
                                   self._handle, KEYS)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _handle(self, message: dict[str, object], source: Source) -> dict[str, object]:
        self.reached.append(message)
        self.sources.append(source)
        if source is not Source.HOOK:
            return {"decision": "deny", "refused": True, "reason": f"forged ({source})"}
        return self.answer

    def _loop(self) -> None:
        while not self._done.is_set():
            self.server.serve(0.05)

    def close(self) -> None:
        self._done.set()
        self._thread.join()
        self.server.close()


@pytest.fixture
def attempt(tmp_path: Path):  # type: ignore[no-untyped-def]
    live = Attempt(tmp_path)
    yield live
    live.close()


def test_another_attempt_is_refused_and_reaches_nothing(attempt: Attempt, client: str) -> None:
    result = hook(json.dumps(PRE), "claude", "--socket", str(attempt.server.path),
                  "--attempt", "attempt_B", "--key", "key_hook")
    assert result.returncode == 2 and "is not the attempt running here" in result.stderr
    assert attempt.reached == []


@pytest.mark.parametrize(("key", "source"), [("key_stale", Source.UNKNOWN),
                                             ("key_mcp", Source.MCP)])
def test_a_key_not_the_hooks_reaches_the_attempt_as_what_it_is_and_is_denied(
        attempt: Attempt, client: str, key: str, source: Source) -> None:
    result = hook(json.dumps(PRE), "claude", "--socket", str(attempt.server.path),
                  "--attempt", "attempt_A", "--key", key)
    assert result.returncode == 2 and "forged" in result.stderr
    assert attempt.sources == [source]


def test_the_hooks_key_gets_a_native_decision(attempt: Attempt, client: str) -> None:
    result = hook(json.dumps(PRE), "claude", "--socket", str(attempt.server.path),
                  "--attempt", "attempt_A", "--key", "key_hook")
    assert result.returncode == 0
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer == {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                      "permissionDecisionReason": "ok"}
    assert attempt.reached[0]["input"] == PRE and attempt.sources == [Source.HOOK]


def test_a_replaced_input_is_passed_on_as_updated_input(attempt: Attempt, client: str) -> None:
    attempt.answer = {"decision": "allow", "reason": "ok",
                      "updatedInput": json.dumps({"command": "stub TOKEN"})}
    result = hook(json.dumps(PRE), "claude", "--socket", str(attempt.server.path),
                  "--attempt", "attempt_A", "--key", "key_hook")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["updatedInput"] == {"command": "stub TOKEN"}


@pytest.mark.parametrize("decision", ["allow", "deny"])
def test_a_skills_shell_command_gets_its_decision_in_its_own_event_and_never_an_input(
        attempt: Attempt, client: str, decision: str) -> None:
    """Claude Code's PreSkillShellCommand: allow or deny only (any updatedInput blocks)."""
    attempt.answer = {"decision": decision, "reason": "by rule",
                      "updatedInput": json.dumps({"command": "stub TOKEN"})}
    skill = {"hook_event_name": "PreSkillShellCommand", "tool_name": "Bash",
             "tool_input": {"command": "git status"}, "tool_use_id": "s1",
             "command_name": "probe"}
    result = hook(json.dumps(skill), "claude", "--socket", str(attempt.server.path),
                  "--attempt", "attempt_A", "--key", "key_hook")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hookSpecificOutput"] == {
        "hookEventName": "PreSkillShellCommand", "permissionDecision": decision,
        "permissionDecisionReason": "by rule"}
    assert attempt.reached[0]["event"] == "PreSkillShellCommand"


def test_a_replacement_that_is_not_a_json_object_denies(attempt: Attempt, client: str) -> None:
    attempt.answer = {"decision": "allow", "reason": "ok", "updatedInput": "[1] {}"}
    result = hook(json.dumps(PRE), "claude", "--socket", str(attempt.server.path),
                  "--attempt", "attempt_A", "--key", "key_hook")
    assert result.returncode == 2 and result.stdout == ""
    assert "replacement input is not a JSON object" in result.stderr


def test_an_input_written_over_several_lines_reaches_the_attempt_whole(attempt: Attempt, client: str) -> None:
    result = hook(json.dumps(PRE, indent=2) + "\r\n", "claude", "--socket",
                  str(attempt.server.path), "--attempt", "attempt_A", "--key", "key_hook")
    assert result.returncode == 0, result.stderr
    assert attempt.reached[0]["input"] == PRE


def test_the_session_start_named_by_event_reaches_the_attempt_and_is_acknowledged(
        attempt: Attempt, client: str) -> None:
    """A CLI whose hook input names no event gets one command per event (`--event`); the
    session's start carries no tool call."""
    attempt.answer = {"ok": True}
    result = hook('{"sessionId": "s"}', "claude", "--socket", str(attempt.server.path),
                  "--attempt", "attempt_A", "--key", "key_hook", "--event", "SessionStart")
    assert result.returncode == 0 and result.stdout == "", result.stderr
    assert attempt.reached[0]["event"] == "SessionStart"
    assert attempt.reached[0]["input"] == {"sessionId": "s"}


@pytest.mark.parametrize("event", ["Pre ToolUse", "x;y"])
def test_an_event_that_is_no_name_denies_and_reaches_nothing(attempt: Attempt, client: str,
                                                             event: str) -> None:
    result = hook(json.dumps(PRE), "claude", "--socket", str(attempt.server.path),
                  "--attempt", "attempt_A", "--key", "key_hook", "--event", event)
    assert result.returncode == 2 and "is not an event name" in result.stderr
    assert attempt.reached == []


def test_the_hook_process_loads_only_its_own_two_modules_of_agentctl() -> None:
    """Started twice per tool call, as a plain script without `site`: it must not pay for what
    the command line's start-up needs (the dataclass code table would cost it ~15 ms)."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-E", "-s", "-S", "-c",
         f"import sys; sys.path.insert(0, {str(root)!r}); import agentctl.hooks.hook; "
         "print(sorted(m for m in sys.modules if m.startswith('agentctl')), "
         "'dataclasses' in sys.modules)"],
        capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == \
        "['agentctl', 'agentctl.hooks', 'agentctl.hooks.hook', 'agentctl.hooks.wire'] False"


COPILOT_PRE = {"sessionId": "s", "timestamp": 1, "cwd": "/w", "toolName": "bash",
               "toolArgs": {"command": "echo hi", "description": "say hi"}}


def copilot_hook(attempt: Attempt, event: str = "PreToolUse",
                 payload: dict[str, object] = COPILOT_PRE) -> subprocess.CompletedProcess[str]:
    return hook(json.dumps(payload), "copilot", "--socket", str(attempt.server.path),
                "--attempt", "attempt_A", "--key", "key_hook", "--event", event)


def test_copilot_is_answered_in_its_own_format_with_an_explicit_allow(attempt: Attempt, client: str) -> None:
    """Copilot reads an answer without `permissionDecision` as "ask" (auto-approved with
    --allow-all-tools): the allow is always explicit, a rewrite is `modifiedArgs`."""
    attempt.answer = {"decision": "allow", "reason": "ok",
                      "updatedInput": json.dumps({"command": "stub TOKEN"})}
    result = copilot_hook(attempt)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"permissionDecision": "allow",
                                         "permissionDecisionReason": "ok",
                                         "modifiedArgs": {"command": "stub TOKEN"}}
    assert attempt.reached[0]["event"] == "PreToolUse"
    assert attempt.reached[0]["input"] == COPILOT_PRE


def test_copilot_denied_is_told_twice_the_answer_and_exit_2(attempt: Attempt, client: str) -> None:
    attempt.answer = {"decision": "deny", "reason": "deny: curl *"}
    result = copilot_hook(attempt)
    assert result.returncode == 2
    assert json.loads(result.stdout) == {"permissionDecision": "deny",
                                         "permissionDecisionReason": "deny: curl *"}
    assert result.stderr == "agentctl: denied: deny: curl *\n"


def test_copilot_input_without_its_tool_name_denies(attempt: Attempt, client: str) -> None:
    result = copilot_hook(attempt, payload={"sessionId": "s", "tool_name": "bash"})
    assert result.returncode == 2 and result.stdout == ""
    assert attempt.reached == []


def launched(attempt: Attempt, stdin: str, agent: str = "claude",
             key: str = "key_hook") -> subprocess.CompletedProcess[str]:
    """The hook exactly as an adapter writes it into the CLI's settings, run through a shell
    as the CLIs run it."""
    command = hook_command(agent, AttemptIdentity(attempt.server.path.parent, "attempt_A"), key)
    return subprocess.run(["bash", "-c", command], input=stdin, capture_output=True, text=True,
                          timeout=60)


def test_the_hook_as_the_adapters_start_it_answers_from_its_cached_bytecode(
        attempt: Attempt) -> None:
    """launch.py imports the hook as a module, so it loads from bytecode (`hook_command`
    writes it where it lacks) instead of compiling a script on every start."""
    result = launched(attempt, json.dumps(PRE))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert attempt.reached[0]["input"] == PRE and attempt.sources == [Source.HOOK]
    for module in (hook_module, wire):
        assert Path(importlib.util.cache_from_source(module.__file__)).is_file()


@pytest.mark.parametrize("stdin", ["not json", json.dumps(PRE)])
def test_the_hook_as_the_adapters_start_it_fails_closed(attempt: Attempt, stdin: str) -> None:
    """Bad input, or a key the attempt did not issue: exit 2 and one line, as the module."""
    result = launched(attempt, stdin, key="key_stale")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("agentctl: denied:")


def test_the_launched_hook_imports_no_package_and_no_future() -> None:
    """Each import is a file read on each of two starts per tool call: the launched hook looks
    for no `agentctl` package (it is not on its path) and imports no `__future__`."""
    done = subprocess.run(
        [sys.executable, "-E", "-s", "-S", "-X", "importtime",
         str(Path(hook_module.__file__).with_name("launch.py")), "claude"],
        input="{}", capture_output=True, text=True, timeout=60)
    imported = [line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")]
    assert done.returncode == 2 and "hook" in imported and "wire" in imported
    assert not {"agentctl", "__future__", "json", "socket", "re"} & set(imported)
