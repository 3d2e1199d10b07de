"""A real terminal for tests: a tmux pane of a given size running bash, typed into with
`send-keys`, read back with `capture-pane` (what a person would see on the screen)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.machine import unavailable

TMUX = shutil.which("tmux")


class Terminal:
    def __init__(self, socket: str, cwd: Path, env: Mapping[str, str]) -> None:
        self.socket, self.cwd, self.env = socket, cwd, env

    def _tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run([TMUX, "-S", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True, env=dict(self.env), timeout=30)
        return done.stdout

    def type(self, line: str) -> None:
        """Type `line` and Enter."""
        self._tmux("send-keys", "-t", "t", "-l", line)
        self._tmux("send-keys", "-t", "t", "Enter")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def screen(self) -> str:
        """The screen and its scroll-back; a line the terminal wrapped is joined again (so
        `width` tells whether it did)."""
        return self._tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-2000")

    def wait_for(self, text: str, timeout: float = 90.0, *, across_lines: bool = False) -> str:
        """The screen once `text` is on it; `across_lines`: also where the program broke it
        over lines itself (Rich wraps a prompt longer than the terminal, a temporary
        folder's path say, with a newline, which the terminal cannot join again)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in (shown.replace("\n", "") if across_lines else shown):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared on the screen:\n{self.screen()}")

    def run(self, command: str, timeout: float = 120.0) -> tuple[str, int]:
        """Run `command` in the shell and wait for it to end: (what it showed, exit code)."""
        marker = uuid.uuid4().hex[:8]
        self.type(f'clear; echo "start-""{marker}"; {command}; echo "done-""{marker}" $?')
        self.wait_for(f"done-{marker} ", timeout)
        lines = [line.rstrip() for line in self.screen().splitlines()]
        start = max(i for i, line in enumerate(lines) if line == f"start-{marker}")
        end = max(i for i, line in enumerate(lines) if line.startswith(f"done-{marker} "))
        return "\n".join(lines[start + 1:end]), int(lines[end].split()[1])


@contextmanager
def terminal(width: int, cwd: Path, env: Mapping[str, str], height: int = 60,
             ) -> Iterator[Terminal]:
    """A `width` x `height` terminal running bash in `cwd` with `env`."""
    if TMUX is None:  # skipped on a laptop without it; under CI (which installs it) a failure
        unavailable("needs tmux (apt-get install tmux)")
    folder = tempfile.mkdtemp(prefix="agentctl-tmux-")  # short: a socket path has a limit
    socket = str(Path(folder) / "socket")
    environment = {**os.environ, **env, "PS1": "$ ", "TERM": "xterm-256color"}
    environment.pop("TMUX", None)
    term = Terminal(socket, cwd, environment)
    term._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "t", "-c",
               str(cwd), "bash --norc --noprofile")
    term._tmux("set-option", "-g", "history-limit", "5000")
    try:
        yield term
    finally:
        term._tmux("kill-server")
        shutil.rmtree(folder, ignore_errors=True)
