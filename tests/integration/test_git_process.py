"""Running git for agentctl's own calls: input fed to a process that outlives one poll."""

from __future__ import annotations

import os

from agentctl.execution.git import run_git_process


def test_input_reaches_a_process_slower_than_one_poll() -> None:
    """A call with stdin that is still running at the first poll (0.1 s) gets its input and its
    output, as a quick one does (a second communicate() with the input raised ValueError: every
    `update-index --index-info` or `add --pathspec-from-file` on a large index failed)."""
    result = run_git_process(["sh", "-c", "sleep 0.5; cat"], env=os.environ, what="cat",
                             stdin=b"every path\0")
    assert result.returncode == 0
    assert result.stdout == "every path\0"
