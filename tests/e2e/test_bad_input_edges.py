"""Input found to crash agentctl (exit 70) now gets one line and exit 2, and changes nothing.

In-process (`cli`), but for bytes that are not UTF-8: a shell passes them to the installed
command, whose argument decoding is what is tested."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def test_an_instruction_that_is_not_utf8_is_refused(agentctl_executable: str, repo: Path,
                                                    home: Path, error_line, state_of) -> None:
    result = subprocess.run(  # bytes, as a shell passes them
        [agentctl_executable, "task", "submit", "--repo", str(repo), "--type", "bug_fix",
         "--instruction", b"caf\xe9"],
        env={**os.environ, "AGENTCTL_HOME": str(home)}, capture_output=True, text=True)
    assert result.returncode == 2
    assert "not valid UTF-8" in error_line(result.stderr)
    assert state_of(home) is None


def test_a_plan_whose_steps_are_not_tables_is_refused_before_a_run_exists(
        cli, repo: Path, tmp_path: Path, home: Path, error_line) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text("step = [1, 2]\n")
    task = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
               "--instruction", "x", "--json").json()
    result = cli("run", "start", task["taskId"], "--agent", f"script:{plan}")  # type: ignore[index]
    assert result.returncode == 2
    assert "expected a [[step]] table, got int" in error_line(result.stderr)
    assert cli("run", "list", "--json").json() == []


@pytest.mark.parametrize("command", [("run", "list"), ("task", "list"), ("session", "list")])
def test_a_limit_past_what_the_database_can_count_is_refused(cli, error_line,
                                                              command: tuple[str, str]) -> None:
    result = cli(*command, "--limit", "99999999999999999999999")
    assert result.returncode == 2
    assert "--limit" in error_line(result.stderr)


@pytest.mark.parametrize("content", [b"this is not a database\n", b"\0" * 4096])
def test_a_corrupt_database_is_one_line_and_exit_2_for_reads_and_writes(
        cli, repo: Path, home: Path, error_line, content: bytes) -> None:
    home.mkdir()
    (home / "agentctl.db").write_bytes(content)
    for args in (("task", "list"), ("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                                    "--instruction", "x")):
        result = cli(*args)
        assert result.returncode == 2, result.stderr
        assert "the state database cannot be used" in error_line(result.stderr)
    assert (home / "agentctl.db").read_bytes() == content
