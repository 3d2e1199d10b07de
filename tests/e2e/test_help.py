"""Every command has help; help and the read-only commands start without the heavy libraries."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer import _click as click
from typer.core import TyperGroup

from agentctl.cli.app import COMMANDS, app
from agentctl.cli.run.commands import RunGroup
from agentctl.cli.task.commands import TaskGroup
from agentctl.cli.verdict.commands import VerdictGroup

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

    def walk(group: click.Command, prefix: tuple[str, ...]) -> None:
        if not isinstance(group, TyperGroup):
            return
        for name in sorted(group.list_commands(click.Context(group))):
            paths.append((*prefix, name))
            walk(subcommand(group, name), (*prefix, name))

    walk(root, ())
    return paths


def subcommand(group: click.Command, name: str) -> click.Command:
    """The sub-command as the command line finds it (the root's are imported on first use)."""
    assert isinstance(group, TyperGroup)
    command = group.get_command(click.Context(group), name)
    assert command is not None, name
    return command


def probe(paths: list[list[str]], env: dict[str, str] | None = None,
          heavy: tuple[str, ...] = HEAVY) -> list[dict]:
    environment = {**os.environ, **(env or {})}
    environment.pop("AGENTCTL_CONFIG", None)
    completed = subprocess.run([sys.executable, "-c", PROBE, json.dumps(paths), json.dumps(heavy)],
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
        command = subcommand(command, name)
    assert (command.help or "").strip(), f"{' '.join(path)} has no help"
    for param in command.params:
        if param.name in ("help",):
            continue
        assert (getattr(param, "help", None) or "").strip(), f"{param.name} of {path} has no help"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_root_lists_each_command_with_its_own_help(name: str) -> None:
    """The root help shows a stored summary so as to import no command: it must not drift."""
    command = subcommand(typer.main.get_command(app), name)
    first_paragraph = " ".join(inspect.cleandoc(command.help or "").split("\n\n")[0].split())
    assert COMMANDS[name].summary == first_paragraph


def test_root_help_imports_no_command_module(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "-X", "importtime", "-m", "agentctl", "--help"],
                               capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert completed.returncode == 0, completed.stderr
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines()
                if line.startswith("import time:")}
    modules = {entry.target.partition(":")[0] for entry in COMMANDS.values()}
    assert "agentctl.cli.app" in imported  # the measurement works
    assert not imported & modules, imported & modules
    # nor what a command's state is built of: the config, the store, the views
    state = {"agentctl.cli.context", "agentctl.config", "agentctl.store", "agentctl.store.storage",
             "agentctl.store.task_views", "agentctl.store.views"}
    assert not imported & state, imported & state


LOADED = """
import json, sys
from agentctl.cli.main import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
print(" ".join(name for name in sys.modules if name.startswith("agentctl.")))
"""


def loaded(path: list[str], cwd: Path) -> set[str]:
    """The agentctl modules a fresh interpreter holds after `agentctl PATH`."""
    completed = subprocess.run([sys.executable, "-c", LOADED, json.dumps(path)],
                               capture_output=True, text=True, cwd=cwd, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return set(completed.stdout.split())


def test_a_command_imports_its_own_module_and_no_other_command(tmp_path: Path) -> None:
    modules = loaded(["audit", "--help"], tmp_path)
    assert "agentctl.cli.audit" in modules
    assert not {"agentctl.cli.task", "agentctl.cli.run", "agentctl.cli.pr"} & modules, modules


GROUPS = {"run": RunGroup, "task": TaskGroup, "verdict": VerdictGroup}


@pytest.mark.parametrize("path", [(group, name) for group, cls in GROUPS.items() for name in cls.lazy],
                         ids=" ".join)
def test_a_group_lists_each_command_with_its_own_help(path: tuple[str, str]) -> None:
    """`agentctl run --help` shows stored summaries so as to import no run command."""
    group, name = path
    command = subcommand(subcommand(typer.main.get_command(app), group), name)
    first_paragraph = " ".join(inspect.cleandoc(command.help or "").split("\n\n")[0].split())
    assert GROUPS[group].lazy[name].summary == first_paragraph


# What a read command must not load: the other commands of its group that write, and what
# they run (the run pipeline, a replay, the submit dialog, a decision's prompt).
WRITES = {"agentctl.cli.run.start", "agentctl.cli.running", "agentctl.cli.run.replay",
          "agentctl.cli.task.submit", "agentctl.cli.task.asking", "agentctl.cli.dialog",
          "agentctl.cli.verdict.decide", "agentctl.services.lifecycle.start",
          "agentctl.services.actions.replay", "agentctl.services.attempts.pipeline"}


@pytest.mark.parametrize("path", [["run", "--help"], ["run", "list", "--help"],
                                  ["run", "show", "--help"], ["task", "list", "--help"],
                                  ["task", "show", "--help"], ["verdict", "show", "--help"],
                                  ["verdict", "explain", "--help"]], ids=" ".join)
def test_a_read_command_loads_no_write_command_of_its_group(path: list[str],
                                                            tmp_path: Path) -> None:
    modules = loaded(path, tmp_path)
    group = f"agentctl.cli.{path[0]}."
    assert any(m.startswith(group) for m in modules), modules  # the measurement works
    assert not modules & WRITES, modules & WRITES


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


def test_the_json_of_a_read_command_loads_no_rich(home: Path) -> None:
    """`--json` is what agents read: no console, no tables (Rich is for text)."""
    paths = [["task", "list", "--json"], ["events", "--json"]]
    for report in probe(paths, env={"AGENTCTL_HOME": str(home)}, heavy=("rich",)):
        command = " ".join(report["path"])
        assert report["code"] in (0, None), (command, report["err"])
        assert report["out"].startswith("["), (command, report["out"])  # it measures
        assert report["heavy"] == [], f"'agentctl {command}' imported {report['heavy']}"


# The store's readers, lightest first: a read command loads the one that holds its records, and
# never `Store` (the blobs, the audit signer, the schema: what a write needs); `run list` and
# `run show` look for a lease that ran out through the views too.
LIGHTER = {"task_views": ["agentctl.store.task_views"],
           "run_views": ["agentctl.store.task_views", "agentctl.store.run_views"],
           "views": ["agentctl.store.views"]}
HEAVIER = {"task_views": {"agentctl.store.run_views", "agentctl.store.views",
                          "agentctl.store.reads", "agentctl.store.storage",
                          "agentctl.store.checkpoint", "agentctl.store.rows.runs"},
           "run_views": {"agentctl.store.views", "agentctl.store.reads", "agentctl.store.storage",
                         "agentctl.store.checkpoint", "agentctl.services.ports"},
           "views": {"agentctl.store.reads", "agentctl.store.storage", "agentctl.store.checkpoint",
                     "agentctl.store.write_side"}}


def test_a_read_command_loads_the_lightest_reader_of_its_records_and_no_store(
        agentctl, repo: Path) -> None:
    submitted = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                         "--instruction", "x", "--json")
    assert submitted.returncode == 0, submitted.stderr
    task_id = submitted.json()["taskId"]
    for path, reader in [(["events"], "task_views"), (["session", "list"], "task_views"),
                         (["task", "list"], "run_views"), (["task", "show", task_id], "run_views"),
                         (["run", "list"], "views")]:
        done = agentctl(*path, env={"PYTHONPROFILEIMPORTTIME": "1"})
        assert done.returncode == 0, done.stderr[-2000:]
        modules = {line.split("|")[-1].strip()
                   for line in done.stderr.splitlines() if line.startswith("import time:")}
        assert set(LIGHTER[reader]) <= modules, (path, modules)  # the measurement works
        assert not modules & HEAVIER[reader], (path, modules & HEAVIER[reader])


def test_the_hooks_path_loads_neither_typer_nor_the_app(tmp_path: Path) -> None:
    """The hook runs once per tool call: `main` answers it before `dispatch` (Typer, the app)."""
    completed = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom agentctl.cli.main import main\n"
         "try:\n    main(['hook'])\nexcept SystemExit as done:\n    print(done.code)\n"
         "print(' '.join(sorted({'typer', 'agentctl.cli.dispatch', 'agentctl.cli.app'}"
         " & set(sys.modules))))"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60)
    code, loaded_here = completed.stdout.split("\n")[:2]
    assert code == "2" and "usage: agentctl hook" in completed.stderr, completed  # it ran
    assert loaded_here == "", loaded_here


def test_mcp_serve_help_loads_no_mcp() -> None:
    """The MCP server (mcp_tools, the mcp extra) is imported when a server starts."""
    for report in probe([["mcp", "--help"], ["mcp", "serve", "--help"]], heavy=("mcp",)):
        assert report["code"] == 0 and "Usage" in report["out"], report
        assert report["heavy"] == [], report
