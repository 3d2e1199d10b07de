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


def test_input_larger_than_a_pipe_reaches_a_process_that_reads_it_late() -> None:
    """More input than a pipe holds, to a process that reads none of it within the first poll:
    all of it arrives and ends, so the process finishes (communicate() fed the rest only in the
    call that was given it: git waited for it until the timeout, as a `cat-file --batch` of
    thousands of trees did)."""
    many = b"".join(b"%040x\n" % number for number in range(50_000))  # 2 MB, a pipe holds 64 KB
    result = run_git_process(["sh", "-c", "sleep 0.5; wc -c"], env=os.environ, what="wc",
                             stdin=many, timeout=60)
    assert result.returncode == 0
    assert int(result.stdout) == len(many)
