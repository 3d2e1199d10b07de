"""The compiled hook is built once per source and compiler, used where it can be, and never
where it cannot (no compiler, a failed build, switched off): then the Python hook answers. Any
answer from the socket that is not a whole, well-formed one denies, with either hook."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.execution.agents import AttemptIdentity
from agentctl.execution.agents.channel import hook_command
from agentctl.execution.agents.hook_binary import NAME, SOURCE, SWITCH, digest, native_hook
from tests.agents.test_hook import PRE, Attempt, client, hook, native_binary
from tests.conftest import AGENTCTL

__all__ = ["client", "native_binary"]  # fixtures


@pytest.fixture
def attempt(tmp_path: Path) -> Iterator[Attempt]:
    live = Attempt(tmp_path)
    yield live
    live.close()


def compiler(folder: Path, *, version: str = "", fails: bool = False) -> dict[str, str]:
    """An environment whose only `cc` is a script in `folder`: the real compiler, with
    another version line, or one that fails every build."""
    folder.mkdir(exist_ok=True)
    real = subprocess.run(["sh", "-c", "command -v cc"], capture_output=True, text=True,
                          check=True).stdout.strip()
    build = "echo 'hook.c:1: error: no' >&2; exit 1" if fails else f'exec {real} "$@"'
    (folder / "cc").write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "{version}"; '
                               f'exit 0; }}\n{build}\n')
    (folder / "cc").chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:/usr/bin:/bin"}


def test_the_hook_is_built_once_and_again_for_another_compiler(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = native_hook(cache, compiler(tmp_path / "a", version="cc 1.0"))
    assert first.binary is not None and first.why == "native, built now"
    assert first.binary.name == NAME and first.binary.stat().st_mode & 0o777 == 0o755
    again = native_hook(cache, compiler(tmp_path / "a", version="cc 1.0"))
    assert again == type(first)(first.binary, "native")
    other = native_hook(cache, compiler(tmp_path / "b", version="cc 2.0"))
    assert other.binary is not None and other.binary != first.binary
    assert "built now" in other.why
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [first.binary.parent.name, other.binary.parent.name])
    assert [p.name for p in first.binary.parent.iterdir()] == [NAME]  # no temporary left


def test_another_source_is_another_build() -> None:
    assert digest(b"int main(){}", "/usr/bin/cc", "cc 1\nmore") \
        == digest(b"int main(){}", "/usr/bin/cc", "cc 1\nother")
    assert digest(b"int main(){}", "/usr/bin/cc", "cc 1") \
        != digest(b"int main(){return 0;}", "/usr/bin/cc", "cc 1")


@pytest.mark.parametrize(("env", "why"), [
    ({"PATH": ""}, "no C compiler (cc) on PATH"),
    ({SWITCH: "off"}, f"{SWITCH}=off"),
    ({SWITCH: "fast"}, "is neither auto nor off"),
])
def test_no_compiler_or_switched_off_is_the_python_hook_which_still_answers(
        attempt: Attempt, tmp_path: Path, env: dict[str, str], why: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    choice = native_hook(tmp_path / "cache", {**os.environ, "PATH": str(empty), **env})
    assert choice.binary is None and why in choice.why
    assert not (tmp_path / "cache").exists()
    command = hook_command("claude", AttemptIdentity(attempt.server.path.parent, "attempt_A"),
                           "key_hook", choice.binary)
    assert "launch.py" in command
    allowed = subprocess.run(["sh", "-c", command], input=json.dumps(PRE),
                             capture_output=True, text=True, timeout=60)
    assert allowed.returncode == 0, allowed.stderr
    attempt.answer = {"decision": "deny", "reason": "by rule"}
    denied = subprocess.run(["sh", "-c", command], input=json.dumps(PRE),
                            capture_output=True, text=True, timeout=60)
    assert json.loads(allowed.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert json.loads(denied.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_failed_build_is_the_python_hook_and_says_why(tmp_path: Path) -> None:
    choice = native_hook(tmp_path / "cache", compiler(tmp_path / "bad", fails=True))
    assert choice.binary is None
    assert "could not build the native one: hook.c:1: error: no" in choice.why
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


def test_the_adapters_command_starts_the_compiled_hook(attempt: Attempt,
                                                       native_binary: Path) -> None:
    identity = AttemptIdentity(attempt.server.path.parent, "attempt_A")
    command = hook_command("claude", identity, "key_hook", native_binary)
    assert command.startswith(f"{native_binary} claude ") and command.endswith(" || exit 2")
    done = subprocess.run(["sh", "-c", command], input=json.dumps(PRE), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert attempt.reached[0]["input"] == PRE and attempt.reached[0]["event"] == "PreToolUse"
    # an argument it would not pass on unescaped: the Python hook instead
    assert "launch.py" in hook_command("claude", identity, 'key"x', native_binary)


class RawSocket:
    """A socket that answers each request with fixed bytes, whatever it asked."""

    def __init__(self, path: Path, reply: bytes, *, silent: bool = False) -> None:
        self.path = path
        self.silent = silent
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        self.reply = reply
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        connection, _ = self.server.accept()
        with connection:
            connection.recv(1 << 20)
            connection.sendall(self.reply)
            if self.silent:  # the connection stays open: the hook waits until its deadline
                connection.recv(1)

    def close(self) -> None:
        self.server.close()


@pytest.mark.parametrize("reply", [
    b"", b"garbage\n", b"0 5 0\nab", b"3 0 0\n", b"0 2 0\n{}extra", b"2 0 0\n",
    b"0 0 5\nhello", b"2 0 7\ndenied\n", b"0 999999999 0\n", b"0 2\n{}",
    b"2 0 22\nagentctl: denied: a\nb\n",  # two lines
])
def test_an_answer_that_is_not_whole_and_well_formed_denies(tmp_path: Path, client: str,
                                                            reply: bytes) -> None:
    raw = RawSocket(tmp_path / "bridge.sock", reply)
    try:
        done = hook(json.dumps(PRE), "claude", "--socket", str(raw.path), "--attempt", "a",
                    "--key", "k")
    finally:
        raw.close()
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("agentctl: denied:")


def test_an_attempt_that_never_answers_is_a_denial_at_the_deadline(tmp_path: Path) -> None:
    """The compiled hook built with a one-second deadline (hook.c's REPLY_SECONDS) against a
    socket that takes the request and says nothing."""
    binary = tmp_path / "hook"
    subprocess.run(["cc", "-std=c99", "-DREPLY_SECONDS=1", "-o", str(binary), str(SOURCE)],
                   check=True, capture_output=True, timeout=120)
    raw = RawSocket(tmp_path / "bridge.sock", b"", silent=True)
    try:
        done = subprocess.run([str(binary), "claude", "--socket", str(raw.path), "--attempt",
                               "a", "--key", "k"], input=json.dumps(PRE), capture_output=True,
                              text=True, timeout=60)
    finally:
        raw.close()
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("agentctl: denied: the attempt gave no answer: ")
    assert len(done.stderr.splitlines()) == 1


def test_doctor_says_which_hook_runs_and_why(tmp_path: Path) -> None:
    def finding(**env: str) -> dict[str, object]:
        done = subprocess.run([AGENTCTL, "doctor", "--json"], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path, env={
                                  **os.environ, "AGENTCTL_HOME": str(tmp_path / "home"), **env})
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
        found: list[dict[str, object]] = json.loads(done.stdout)
        return next(f for f in found if f["part"] == "hook")

    native = finding()
    assert (native["ok"], native["required"]) == (True, False)
    assert native["detail"] == f"native, built now ({SWITCH}=off: the Python one)"
    assert list((tmp_path / "home" / "cache" / "hook").glob(f"*/{NAME}"))
    off = finding(**{SWITCH: "off"})
    assert (off["ok"], off["required"]) == (False, False)
    assert str(off["detail"]).startswith(f"Python: {SWITCH}=off")
