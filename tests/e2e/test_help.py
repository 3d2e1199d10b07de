"""Every command has help; help and the read-only commands start without the heavy libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from agentctl.cli.app import app

HEAVY = ("sqlalchemy", "alembic", "git", "unidiff")

# Runs commands in one interpreter and reports, after each, which heavy packages are loaded: the
# first command that reports one is the one that imported it.
PROBE = r"""
import contextlib, io, json, sys
from agentctl.cli.main import main
heavy = set(json.loads(sys.argv[2]))
report = []
for path in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(path)
            code = 0
        except SystemExit as done:
            code = done.code
    loaded = sorted(heavy & {name.split(".")[0] for name in sys.modules})
    report.append({"path": path, "code": code, "heavy": loaded, "out": out.getvalue(),
                   "err": err.getvalue()})
print(json.dumps(report))
"""


def command_paths() -> list[tuple[str, ...]]:
    """Every command and sub-command of the app, the root first."""
    root = typer.main.get_command(app)
    paths: list[tuple[str, ...]] = [()]

    def walk(group: object, prefix: tuple[str, ...]) -> None:
        for name, command in sorted(getattr(group, "commands", {}).items()):
            paths.append((*prefix, name))
            walk(command, (*prefix, name))

    walk(root, ())
    return paths


def probe(paths: list[list[str]], env: dict[str, str] | None = None) -> list[dict]:
    environment = {**os.environ, **(env or {})}
    environment.pop("AGENTCTL_CONFIG", None)
    completed = subprocess.run([sys.executable, "-c", PROBE, json.dumps(paths), json.dumps(HEAVY)],
                               capture_output=True, text=True, env=environment, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_the_app_has_the_foundation_commands() -> None:
    paths = {" ".join(p) for p in command_paths()}
    assert {"init", "task", "task submit", "task list", "task show", "task cancel", "session",
            "session start", "session say", "session show", "session list", "events", "audit",
            "audit verify"} <= paths


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "agentctl")
def test_every_command_and_option_has_help_text(path: tuple[str, ...]) -> None:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    assert (command.help or "").strip(), f"{' '.join(path)} has no help"
    for param in command.params:
        if param.name in ("help",):
            continue
        assert (getattr(param, "help", None) or "").strip(), f"{param.name} of {path} has no help"


def test_help_of_every_command_loads_no_orm_git_or_diff_library() -> None:
    paths = [[*path, "--help"] for path in command_paths()]
    for report in probe(paths):
        command = " ".join(report["path"])
        assert report["code"] == 0, (command, report["err"])
        assert "Usage" in report["out"], command
        assert report["heavy"] == [], f"'agentctl {command}' imported {report['heavy']}"


def test_root_help_imports_nothing_heavy(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "-X", "importtime", "-m", "agentctl", "--help"],
                               capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert "Usage" in completed.stdout and "task" in completed.stdout
    imported = {line.split("|")[-1].strip().split(".")[0]
                for line in completed.stderr.splitlines() if line.startswith("import time:")}
    assert "typer" in imported  # the measurement works
    assert not imported & set(HEAVY), imported & set(HEAVY)


def test_installed_cli_help_and_version(agentctl) -> None:
    helped = agentctl("--help")
    assert helped.returncode == 0 and "Usage" in helped.stdout and helped.stderr == ""
    for noun in ("init", "task", "session", "events", "audit"):
        assert noun in helped.stdout
    version = agentctl("--version")
    assert version.returncode == 0 and version.stdout.startswith("agentctl ")


def test_read_only_commands_load_no_orm(agentctl, repo: Path, home: Path) -> None:
    """They read through the lean views (sqlite3): the ORM costs more than the whole command."""
    submitted = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                         "--instruction", "x", "--json")
    assert submitted.returncode == 0, submitted.stderr
    task_id = submitted.json()["taskId"]
    session = agentctl("session", "start", "--json").json()["sessionId"]
    paths = [["task", "list"], ["task", "list", "--json", "--limit", "50"],
             ["task", "show", task_id],
             ["task", "show", task_id[:16], "--json"], ["events"], ["events", "--json"],
             ["events", "--task", task_id], ["audit", "verify"], ["session", "list"],
             ["session", "show", session]]
    for report in probe(paths, env={"AGENTCTL_HOME": str(home)}):
        command = " ".join(report["path"])
        assert report["code"] in (0, None), (command, report["err"])
        assert report["heavy"] == [], f"'agentctl {command}' imported {report['heavy']}"
