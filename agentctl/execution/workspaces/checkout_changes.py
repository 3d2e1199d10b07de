"""`git status` of a task's local checkout, started as soon as the repository is known: a run
works on the base ref as committed, and the person is told when their checkout holds changes
it will not see. `task submit --run` starts the look when the base ref is resolved, so that it
runs while the task and the run are stored (on a checkout of 200,000 files it takes a fifth of
a second)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agentctl.execution.work_tree import is_url


class CheckoutChanges:
    def __init__(self, repository: str, base_ref: str) -> None:
        self.repository, self.base_ref = repository, base_ref
        self._process: subprocess.Popen[str] | None = None
        if repository and not is_url(repository) and Path(repository).is_dir():
            try:
                # GIT_OPTIONAL_LOCKS=0: a look, not a refresh; the person's index is theirs
                # (rewriting it costs a large checkout's disk, and their own git its lock)
                self._process = subprocess.Popen(
                    ["git", "-C", repository, "status", "--porcelain", "--untracked-files=no"],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                    env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
            except OSError:
                pass

    def changed(self) -> int:
        """How many tracked files differ from the checkout's commit (0 when git cannot say)."""
        if self._process is None:
            return 0
        try:
            output, _ = self._process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.close()
            return 0
        return len(output.strip().splitlines())

    def warning(self) -> str | None:
        """What to tell the person before the run, if anything."""
        count = self.changed()
        if not count:
            return None
        return (f"agentctl: warning: {self.repository} has uncommitted changes ({count} "
                f"file{'s' if count != 1 else ''}); the run works on {self.base_ref} as "
                "committed and will not see them")

    def close(self) -> None:
        """Its git ended, if it still runs (the command failed before asking for it)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
