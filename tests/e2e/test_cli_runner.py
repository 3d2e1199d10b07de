"""The in-process runner (tests/cli_runner.py) answers as the installed command does, and leaves
the test process as it found it: what the in-process tier rests on."""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path

import pytest

from agentctl.cli import output

CASES = [
    ("--help",),
    ("task", "submit", "--help"),
    ("task", "submit", "--repo", "{repo}", "--type", "bugfix", "--instruction", "x"),
    ("task", "list", "--status", "DONE"),
    ("task", "submit", "--colour"),
    ("task", "show", "ZZZZZZ"),
    ("task", "submit", "--repo", "{repo}", "--type", "bug_fix", "--instruction", "x", "--json"),
]


def new_ids(text: str) -> str:
    return re.sub(r"\b([a-z]+)_[0-9A-HJKMNP-TV-Z]{26}\b", r"\1_ID", text)


def counts(state: dict[str, object] | None) -> dict[str, object] | None:
    """Rows per table and the last event's number (its hash covers new ids and times)."""
    if state is None:
        return None
    last = state.get("last_event")
    return {**state, "last_event": last[0] if isinstance(last, tuple) else last}


@pytest.mark.parametrize("args", CASES, ids=lambda args: " ".join(args))
def test_in_process_and_installed_command_answer_alike(
        run_cli, run_agentctl, repo: Path, tmp_path: Path, state_of,
        args: tuple[str, ...]) -> None:
    words = [arg.format(repo=repo) for arg in args]
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    installed = run_agentctl(*words, home=tmp_path / "installed", cwd=cwd)
    in_process = run_cli(*words, home=tmp_path / "in-process", cwd=cwd)
    assert in_process.returncode == installed.returncode
    assert new_ids(in_process.stderr) == new_ids(installed.stderr)
    if "--json" in words:  # new ids and times: the same document otherwise
        assert in_process.json().keys() == installed.json().keys()  # type: ignore[attr-defined]
    else:
        assert in_process.stdout == installed.stdout
    assert counts(state_of(tmp_path / "in-process")) == counts(state_of(tmp_path / "installed"))


def test_in_process_runs_leave_cwd_environment_and_streams_as_they_were(
        cli, repo: Path, tmp_path: Path) -> None:
    before = (Path.cwd(), dict(os.environ), sys.stdout, sys.stderr, sys.stdin,
              signal.getsignal(signal.SIGTERM), output.verbosity)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert cli("--no-color", "task", "list", cwd=elsewhere, env={"AGENTCTL_USER": "x"}
               ).returncode == 0
    assert cli("task", "show", "ZZZZZZ").returncode == 2
    denied = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction",
                 "x", "--autonomy", "auto_pr", "--json").json()["taskId"]
    assert cli("run", "start", denied).returncode == 2  # refused after it set its SIGTERM handler
    assert cli("-q", "task", "list").returncode == 0
    assert (Path.cwd(), dict(os.environ), sys.stdout, sys.stderr, sys.stdin,
            signal.getsignal(signal.SIGTERM), output.verbosity) == before


def test_in_process_runs_leave_no_store_connection_open(
        cli, repo: Path, postgres) -> None:  # type: ignore[no-untyped-def]
    """As a process's exit would: a database the commands wrote and read can then be a template
    (the write goes through the store's pool, the read through a raw connection of it)."""
    url = postgres.database()
    env = {"AGENTCTL_DATABASE_URL": url}
    submitted = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction",
                    "x", "--json", env=env)
    assert submitted.returncode == 0, submitted.stderr
    assert cli("task", "list", env=env).returncode == 0
    copied = postgres.copy(url)  # CREATE DATABASE ... TEMPLATE: refused while a session is open
    listed = cli("task", "list", "--json", env={"AGENTCTL_DATABASE_URL": copied})
    assert [t["taskId"] for t in listed.json()] == [submitted.json()["taskId"]]
