"""Bad input found by a fault-injection campaign (issue 25): each is one line on stderr, exit 2,
and nothing stored — deep nesting, bytes that are not UTF-8, unbounded lengths, an empty
--verify, a binary patch file, a --home that is a file, and a config that does not load (which no
command may skip and fall back to another store). In-process (`cli`), but for bytes that are not
UTF-8, which a shell passes to the installed command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SUBMIT = ("task", "submit", "--type", "refactor", "--instruction", "tidy up")


@pytest.mark.parametrize("name,text", [
    ("deep.json", "[" * 100_000 + "]" * 100_000),
    ("deep.toml", "labels = " + "[" * 50_000 + "]" * 50_000 + "\n"),
])
def test_a_task_file_nested_too_deeply_is_refused(cli, repo: Path, tmp_path: Path,
                                                  home: Path, error_line, state_of,
                                                  name: str, text: str) -> None:
    task_file = tmp_path / name
    task_file.write_text(text)
    result = cli("task", "submit", "--file", str(task_file))
    assert result.returncode == 2
    assert "too deeply" in error_line(result.stderr)
    assert state_of(home) is None


def test_a_config_nested_too_deeply_is_refused_by_a_read_command(cli, tmp_path: Path,
                                                                 error_line) -> None:
    config = tmp_path / "deep.toml"
    config.write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    result = cli("--config", str(config), "task", "list")
    assert result.returncode == 2
    assert "too deeply" in error_line(result.stderr)


def test_a_session_message_that_is_not_utf8_is_refused(cli, agentctl_executable: str,
                                                       home: Path, error_line,
                                                       state_of) -> None:
    session = cli("session", "start", "--json").json()["sessionId"]
    before = state_of(home)
    result = subprocess.run(  # bytes, as a shell passes them
        [agentctl_executable, "session", "say", session, b"caf\xe9 \xff"],
        env={**os.environ, "AGENTCTL_HOME": str(home)}, capture_output=True, text=True)
    assert result.returncode == 2
    assert "not valid UTF-8" in error_line(result.stderr)
    assert state_of(home) == before


def test_an_argument_longer_than_the_bound_is_refused(cli, home: Path, error_line,
                                                      state_of) -> None:
    result = cli("session", "start", "--title", "t" * 100_001)
    assert result.returncode == 2
    assert "too long" in error_line(result.stderr)
    assert state_of(home) is None


@pytest.mark.parametrize("flags,expected", [
    (("--repo", "x" * 5000), "repository is 5,000 characters long"),
    (("--repo", "/" + "x" * 300), "too long"),
    (("--verify", ""), "verification command is empty"),
    (("--verify", "   "), "verification command is empty"),
    (tuple(arg for i in range(100) for arg in ("--label", f"k{i}=v")), "100 labels; at most"),
    (("--label", "k=" + "v" * 5000), "too long"),
])
def test_a_task_argument_past_its_bound_is_refused(cli, repo: Path, home: Path,
                                                   error_line, state_of,
                                                   flags: tuple[str, ...], expected: str) -> None:
    repo_flags = () if "--repo" in flags else ("--repo", str(repo))
    result = cli(*SUBMIT, *repo_flags, *flags)
    assert result.returncode == 2
    assert expected in error_line(result.stderr)
    assert state_of(home) is None


def test_a_task_file_with_a_huge_label_map_is_refused(cli, repo: Path, tmp_path: Path,
                                                      home: Path, error_line, state_of) -> None:
    labels = ", ".join(f'"k{i}": "{"v" * 100}"' for i in range(100_000))
    task_file = tmp_path / "labels.json"
    task_file.write_text(f'{{"repository": "{repo}", "taskType": "refactor", '
                         f'"instruction": "x", "labels": {{{labels}}}}}')
    result = cli("task", "submit", "--file", str(task_file))
    assert result.returncode == 2
    assert "100,000 labels; at most" in error_line(result.stderr)
    assert state_of(home) is None


def test_a_binary_patch_file_is_refused_before_a_run_exists(cli, repo: Path,
                                                             tmp_path: Path, home: Path,
                                                             error_line, state_of) -> None:
    task = cli(*SUBMIT, "--repo", str(repo), "--json").json()
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    before = state_of(home)
    result = cli("run", "start", task["taskId"], "--agent", f"patch:{binary}", "--detach")
    assert result.returncode == 2
    assert "is binary" in error_line(result.stderr)
    assert state_of(home) == before
    assert cli("run", "list", "--json").json() == []


@pytest.mark.parametrize("command", [("task", "list"), ("run", "list"), ("task", "submit")])
def test_a_home_that_is_a_regular_file_is_refused(cli, repo: Path, tmp_path: Path,
                                                  error_line, command: tuple[str, ...]) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("hello\n")
    extra = ("--repo", str(repo), "--type", "refactor", "--instruction", "x") \
        if command == ("task", "submit") else ()
    result = cli("--home", str(not_a_folder), *command, *extra)
    assert result.returncode == 2
    assert "is not a directory" in error_line(result.stderr)
    assert not_a_folder.read_text() == "hello\n"


@pytest.mark.parametrize("text,expected", [
    ("[store]\nurl = 'postgresql+psycopg://agentctl@127.0.0.1:1/nowhere'\n[oops\n",
     "invalid TOML"),
    ("[nope]\nx = 1\n", "unknown section [nope]"),
    ("[worker]\nlease_ttl_seconds = 'soon'\n", "'worker.lease_ttl_seconds' must be"),
    ("[store]\nshelf = 'x'\n", "store.shelf"),
])
@pytest.mark.parametrize("command", [("task", "list"), ("run", "list", "--json"),
                                     ("session", "list"), ("events",)])
def test_every_command_refuses_a_config_that_does_not_load(
        cli, tmp_path: Path, home: Path, error_line, state_of, text: str, expected: str,
        command: tuple[str, ...]) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    result = cli("--config", str(config), *command)
    assert result.returncode == 2
    assert expected in error_line(result.stderr)
    assert result.stdout == ""  # not `[]` read from another store
    assert state_of(home) is None
