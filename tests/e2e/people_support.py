"""Helpers for the end-to-end tests of what people do with a run: approve or reject it, open a PR
branch from it, answer an `ask` prompt at a terminal, plug in their own agent or judge.

Everything goes through the installed CLI and real git; nothing here patches the product.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.runs_support import Bench, Doc, tool_steps

# The GitHub-shaped token the brief's verifier prints, assembled so no file spells it whole.
GITHUB_TOKEN = "ghp_" + "a" * 36
# A passthrough value: no pattern knows it, only the literal redaction of `[env] passthrough`.
API_KEY = "pk-live-" + "7f3a9c2e5b1d"
API_KEY_ENV = {"MY_API_KEY": API_KEY}


def cli_result(bench: Bench, *args: str, env: Mapping[str, str] | None = None) -> Doc:
    """Any outcome of a command, as data: exit code, stdout, stderr (never a traceback)."""
    result = bench.cli(*args, expect=None, env=env)
    return {"exitCode": result.returncode, "stdout": result.stdout, "stderr": result.stderr}


def tool_calls(tree: Doc) -> list[Doc]:
    return [s["toolCall"] for s in tool_steps(tree)]


def stored_text(bench: Bench, artifacts: Sequence[Doc], name: str) -> str:
    """The stored content of the one artifact called `name` in an `artifact list` document."""
    matching = [a for a in artifacts if a["name"] == name]
    assert len(matching) == 1, [a["name"] for a in artifacts]
    return (bench.home / matching[0]["uri"]).read_text()


def tree_of_patch(repo: Path, base: str, patch: str, scratch: Path,
                  git: Callable[..., str]) -> str:
    """The tree id that `patch` applied on `base` gives, computed in a scratch clone."""
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(repo), str(scratch)], check=True)
    git(scratch, "checkout", "-q", "--detach", base)
    (scratch.parent / f"{scratch.name}.diff").write_text(patch)
    git(scratch, "apply", "--index", str(scratch.parent / f"{scratch.name}.diff"))
    return git(scratch, "write-tree")


def make_user_checkout_busy(repo: Path, git: Callable[..., str]) -> None:
    """What a person's checkout looks like mid-work: a stash, a staged change, an unstaged edit
    of a file the run's patch also changes, and an untracked file."""
    readme = repo / "README.md"
    readme.write_text(readme.read_text() + "stashed work in progress\n")
    git(repo, "stash", "push", "-q", "-m", "wip before the PR")
    (repo / "staged.txt").write_text("staged, not committed\n")
    git(repo, "add", "staged.txt")
    init = repo / "calc" / "__init__.py"
    init.write_text(init.read_text() + "# local edit, not committed\n")
    (repo / "scratch-notes.txt").write_text("untracked\n")


def without_branch(snapshot: Mapping[str, object], branch: str) -> dict[str, object]:
    """A repo snapshot with the line of one branch left out of its ref listing."""
    refs = str(snapshot["branches"]).splitlines()
    kept = [line for line in refs if not line.startswith(f"refs/heads/{branch} ")]
    return {**snapshot, "branches": "\n".join(kept)}


def process_gone(pid: int) -> bool:
    """No such process, or only its zombie (killed, waiting for a reaper that may never come)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    state = [line for line in status.splitlines() if line.startswith("State:")]
    return bool(state) and state[0].split()[1] in ("Z", "X")


# --- a terminal for `run start --interactive` ---------------------------------------------------

PROMPT = b"Allow this call?"


@dataclass
class TerminalSession:
    """What a person at a terminal saw and typed, and what the command printed on stdout."""

    exit_code: int
    stdout: str
    screen: str                 # everything written to the terminal (stderr), with our echo
    before_answer: str          # what the terminal showed from the prompt until we answered
    prompts: int
    elapsed: float


def at_terminal(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, answer: str,
                pause: float = 0.0, timeout: float = 60.0) -> TerminalSession:
    """Run `argv` with stdin and stderr on a pseudo-terminal (stdout stays a pipe for `--json`);
    answer `answer` to every approval prompt, `pause` seconds after it appears."""
    master, slave = pty.openpty()
    started = time.monotonic()
    process = subprocess.Popen(list(argv), stdin=slave, stdout=subprocess.PIPE, stderr=slave,
                               env=dict(env), cwd=cwd, start_new_session=True)
    os.close(slave)
    screen, before, prompts, seen = b"", b"", 0, 0
    chunks: list[bytes] = []
    reader = _drain(process.stdout, chunks)
    try:
        while time.monotonic() - started < timeout:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the other side closed: the command is done with the terminal
                    break
                if not data:
                    break
                screen += data
            if screen.count(PROMPT) > seen:
                seen = screen.count(PROMPT)
                mark = screen.rfind(PROMPT)
                if pause:
                    screen += _read_for(master, pause)
                before += screen[mark:]
                os.write(master, f"{answer}\n".encode())
                prompts += 1
            elif not ready and process.poll() is not None:
                break
        process.wait(timeout=max(1.0, timeout - (time.monotonic() - started)))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    reader.join(timeout=5)
    if process.stdout is not None:
        process.stdout.close()
    return TerminalSession(
        exit_code=process.returncode, stdout=b"".join(chunks).decode(errors="replace"),
        screen=screen.decode(errors="replace"), before_answer=before.decode(errors="replace"),
        prompts=prompts, elapsed=time.monotonic() - started)


def _read_for(master: int, seconds: float) -> bytes:
    data, deadline = b"", time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([master], [], [], left)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    return data


def _drain(stream: Any, into: list[bytes]) -> threading.Thread:
    """Read a pipe to its end from a thread, so a full pipe never blocks the child."""

    def read() -> None:
        for chunk in iter(lambda: stream.read(65536), b""):
            into.append(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def submit_and_run(bench: Bench, repo: Path, *flags: str, agent: str, instruction: str,
                   env: Mapping[str, str] | None = None, config: Path | None = None) -> Doc:
    """`task submit --run --json` (one process for both: a second's start-up saved): the run
    document with its exit code under `exitCode`."""
    options = ("--config", str(config)) if config else ()
    result = bench.cli(*options, "task", "submit", "--repo", str(repo), "--type", "refactor",
                       "--instruction", instruction, *flags, "--run", "--agent", agent, "--json",
                       expect=(0, 1), env=env)
    document: Doc = result.json()
    document["exitCode"] = result.returncode
    return document
