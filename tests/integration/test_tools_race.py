"""The fs.* tools against a real racing process: a second process of the agent keeps swapping an
approved directory for a symlink out of the workspace (an atomic renameat2 exchange), as the
attack was found. Nothing may ever be written, read, renamed or deleted outside the workspace."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from agentctl.domain.step import ToolResult
from agentctl.execution.agents.tool_context import ToolContext
from agentctl.execution.agents.tools import execute, guard
from tests.integration.test_tools import make_context

pytestmark = pytest.mark.skipif(platform.system() != "Linux", reason="renameat2 is Linux's")

ROUNDS = 600
OUTSIDE = "OUTSIDE-untouched\n"
INSIDE = "x\n"

# swaps `dir` (a real directory) and `swap` (a symlink out of the workspace) until killed
_RACER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir(sys.argv[1])
print("racing", flush=True)
while True:
    if libc.renameat2(AT_FDCWD, b"dir", AT_FDCWD, b"swap", RENAME_EXCHANGE) != 0:
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
"""


@pytest.fixture
def racing(repo: Path, tmp_path: Path) -> Iterator[tuple[ToolContext, Path, int]]:
    """(context, the outside directory, a descriptor of the real inside directory) while a
    racer swaps `dir` and `swap` in the workspace."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text(OUTSIDE)
    inside = repo / "dir"
    inside.mkdir()
    (inside / "f.txt").write_text(INSIDE)
    (repo / "swap").symlink_to(outside, target_is_directory=True)
    held = os.open(inside, os.O_RDONLY | os.O_DIRECTORY)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    racer = subprocess.Popen([sys.executable, "-c", _RACER, str(repo)], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert racer.stdout is not None and racer.stdout.readline() == "racing\n"
        yield make_context(repo, scratch), outside, held
        assert racer.poll() is None, "the racer stopped"
    finally:
        racer.kill()
        racer.wait()
        os.close(held)


def _outside_untouched(outside: Path) -> None:
    assert sorted(os.listdir(outside)) == ["f.txt"]
    assert (outside / "f.txt").read_text() == OUTSIDE


def _restore(held: int, workspace: Path) -> None:
    """Put `dir/f.txt` back through the held descriptor: the name `dir` is being raced."""
    (workspace / "taken.txt").unlink(missing_ok=True)
    for name in os.listdir(held):
        os.unlink(name, dir_fd=held)
    descriptor = os.open("f.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=held)
    os.write(descriptor, INSIDE.encode())
    os.close(descriptor)


def _race(context: ToolContext, outside: Path, held: int, tool: str,
          arguments: Mapping[str, object]) -> list[ToolResult]:
    """Guard and execute the call ROUNDS times, checking the outside after each; the results of
    the calls the guard allowed."""
    results: list[ToolResult] = []
    for _ in range(ROUNDS):
        if guard(tool, arguments, context).allowed:
            results.append(execute(tool, arguments, context))
        _outside_untouched(outside)
        _restore(held, context.workspace)
        time.sleep(0)
    return results


@pytest.mark.parametrize(("tool", "arguments"), [
    ("fs.write", {"path": "dir/f.txt", "content": "pwned\n"}),
    ("fs.replace", {"path": "dir/f.txt", "old": "x\n", "new": "x\npwned\n"}),
    ("fs.delete", {"path": "dir/f.txt"}),
    ("fs.rename", {"path": "dir/f.txt", "to": "dir/g.txt"}),
    ("fs.rename", {"path": "dir/f.txt", "to": "taken.txt"}),
], ids=["write", "replace", "delete", "rename-within", "rename-out"])
def test_a_directory_swapped_for_a_symlink_mid_call_never_lets_a_file_tool_out(
    racing: tuple[ToolContext, Path, int], tool: str, arguments: Mapping[str, object],
) -> None:
    context, outside, held = racing
    results = _race(context, outside, held, tool, arguments)
    assert results, "the guard never allowed the call: the race was not run"
    assert any(result.ok for result in results)
    errors = {result.error or "" for result in results if not result.ok}
    # refused by the re-check, or stopped at the swapped component: nothing else went wrong
    assert all(error.startswith("refused: ") or "symlink" in error or "does not exist" in error
               for error in errors), errors


def test_fs_read_through_a_swapped_directory_never_returns_an_outside_file(
    racing: tuple[ToolContext, Path, int],
) -> None:
    context, outside, held = racing
    results = _race(context, outside, held, "fs.read", {"path": "dir/f.txt"})
    assert results
    assert not [result for result in results if "OUTSIDE" in result.output]
    assert any(result.ok and result.output == INSIDE for result in results)


def test_a_symlink_inside_the_workspace_is_not_followed_by_the_file_tools(
    repo: Path, tmp_path: Path,
) -> None:
    (repo / "alias").symlink_to(repo / "src", target_is_directory=True)
    context = make_context(repo, tmp_path)
    assert guard("fs.write", {"path": "alias/new.py", "content": "x"}, context).allowed
    result = execute("fs.write", {"path": "alias/new.py", "content": "x"}, context)
    assert not result.ok and "`alias` is a symlink" in (result.error or "")
    assert not (repo / "src" / "new.py").exists()
