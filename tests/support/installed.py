"""The installed `agentctl` command run as a user runs it: one body behind the `agentctl`
fixture (a home per test) and the `run_agentctl` one (an explicit home, for module-scoped
setups)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

AGENTCTL = shutil.which("agentctl", path=str(Path(sys.executable).parent)) or "agentctl"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
}


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> object:
        return json.loads(self.stdout)


def run_installed(*args: str, home: Path, cwd: Path, env: Mapping[str, str] | None = None,
                  timeout: float = 120, input: str | None = None) -> Result:
    """`agentctl ARGS` against `home`, in `cwd`, with no config named by the environment."""
    environment = {**os.environ, "AGENTCTL_HOME": str(home), **GIT_IDENTITY}
    environment.pop("AGENTCTL_CONFIG", None)
    environment.update(env or {})
    completed = subprocess.run(
        [AGENTCTL, *args], cwd=cwd, env=environment, capture_output=True, text=True,
        timeout=timeout, input=input,
    )
    return Result(completed.returncode, completed.stdout, completed.stderr)
