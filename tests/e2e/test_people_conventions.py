"""The conventions a person expects of a command-line tool: help on a bare call, plumbing apart,
completion that loads in bash, -q, --no-color, `doctor`, `init` proposing the test command, a
warning about uncommitted changes, and `events` saying who did what."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import AGENTCTL, Result
from tests.e2e.runs_support import toml_plan
from tests.e2e.terminal_support import terminal

Cli = Callable[..., Result]


def test_bare_agentctl_prints_help_and_exits_0(cli: Cli) -> None:
    bare = cli()
    assert bare.returncode == 0 and "Usage: agentctl" in bare.stdout


def test_plumbing_commands_have_their_own_help_section(cli: Cli) -> None:
    helped = cli("--help").stdout
    users, _, plumbing = helped.partition("Plumbing commands:")
    assert {line.split()[0] for line in plumbing.strip().splitlines()} == {"hook", "mcp", "db"}
    assert re.search(r"^  task ", users, re.MULTILINE) and "  hook " not in users
    assert re.search(r"^  doctor ", users, re.MULTILINE)


@pytest.mark.parametrize("command", [("run", "start"), ("task", "submit")])
def test_agent_help_lists_every_agent(cli: Cli, command: tuple[str, ...]) -> None:
    helped = " ".join(cli(*command, "--help").stdout.split())
    for agent in ("claude[:MODEL]", "codex[:MODEL]", "copilot[:MODEL]",
                  "opencode[:PROVIDER/MODEL]", "script:PLAN.toml", "patch:FILE.diff",
                  "command:CMD", "noop"):
        assert agent in helped


def test_the_bash_completion_script_loads_and_completes(agentctl: Cli, tmp_path: Path) -> None:
    script = agentctl("--show-completion", "bash")
    assert script.returncode == 0 and "complete" in script.stdout
    (tmp_path / "completion.bash").write_text(script.stdout)
    loaded = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                             f"source {tmp_path / 'completion.bash'} && complete -p agentctl"],
                            capture_output=True, text=True, timeout=30)
    assert loaded.returncode == 0 and "agentctl" in loaded.stdout, loaded.stderr
    completed = subprocess.run([AGENTCTL], capture_output=True, text=True, timeout=30, env={
        **os.environ, "_AGENTCTL_COMPLETE": "complete_bash", "COMP_WORDS": "agentctl ta",
        "COMP_CWORD": "1"})
    assert completed.stdout.split() == ["task"]


def test_quiet_leaves_out_the_hints(cli: Cli, repo: Path) -> None:
    args = ("task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction", "x")
    assert "next: agentctl run start" in cli(*args).stderr
    assert cli("-q", *args).stderr == ""


def test_no_color_and_NO_COLOR_turn_the_colours_off(agentctl: Cli, repo: Path,
                                                    home: Path) -> None:
    agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction", "x")
    shown = {}
    with terminal(120, repo, {"AGENTCTL_HOME": str(home)}) as term:
        for name, command in (("plain", "agentctl task list"),
                              ("flag", "agentctl --no-color task list"),
                              ("env", "NO_COLOR=1 agentctl task list")):
            term.type(f"clear; {command}; echo \"do\"ne-{name}")
            term.wait_for(f"done-{name}")
            shown[name] = term._tmux("capture-pane", "-p", "-e", "-t", "t")
    assert "\x1b[32mREADY_FOR_RUN" in shown["plain"], shown["plain"]
    assert "READY_FOR_RUN" in shown["flag"] and "\x1b[32m" not in shown["flag"]
    assert "READY_FOR_RUN" in shown["env"] and "\x1b[32m" not in shown["env"]


def test_doctor_checks_each_part_and_never_prints_a_token(cli: Cli) -> None:
    token = "ghp_" + "d" * 36
    checked = cli("doctor", env={"GITHUB_TOKEN": token})
    assert checked.returncode == 0, checked.stdout
    parts = [line.split()[1] for line in checked.stdout.splitlines()]
    assert parts == ["sandbox", "limits", "views", "claude", "codex", "copilot", "gemini",
                     "opencode", "hook", "store", "forge", "start-up"]
    assert "token in GITHUB_TOKEN" in checked.stdout and token not in checked.stdout
    document = cli("doctor", "--json", env={"GITHUB_TOKEN": ""}).json()
    forge = next(f for f in document if f["part"] == "forge")  # type: ignore[union-attr]
    assert (forge["ok"], forge["required"]) == (False, False)


@pytest.mark.parametrize(("env", "words"), [
    ({"PYTHONDONTWRITEBYTECODE": "1"}, "PYTHONDONTWRITEBYTECODE (or -B) is set"),
    ({"AGENTCTL_PLAIN": "1"}, "speed-ups off (AGENTCTL_PLAIN is set)"),
], ids=["no-bytecode", "plain"])
def test_doctor_says_when_the_start_up_speed_ups_are_off(
        agentctl: Callable[..., Result], env: dict[str, str], words: str) -> None:
    """The dataclass code table is silently never written where Python writes no bytecode:
    doctor says so (a warning: nothing is wrong but the start-up's cost)."""
    document = agentctl("doctor", "--json", env=env).json()
    start_up = next(f for f in document if f["part"] == "start-up")  # type: ignore[union-attr]
    assert (start_up["ok"], start_up["required"]) == (False, False)
    assert words in start_up["detail"], start_up


def test_init_writes_the_detected_test_command_without_a_terminal(cli: Cli,
                                                                  repo: Path) -> None:
    (repo / "tests" / "conftest.py").write_text("")
    created = cli("init", cwd=repo)
    assert created.returncode == 0
    assert "detected test command: python -m pytest; written under [verification] commands" \
        in created.stderr.splitlines()
    assert '\ncommands = ["python -m pytest"]\n' in (repo / ".agentctl.toml").read_text()


def test_init_takes_a_pytest_suite_in_testing_for_pytest(
        cli: Cli, tmp_path: Path, repo_maker: Callable[..., Path]) -> None:
    """iniconfig's layout: bare test functions in `testing/`, no conftest, no pytest config."""
    repo = repo_maker(tmp_path / "iniconfig", {
        "src/iniconfig/__init__.py": "", "pyproject.toml": "[project]\nname = 'iniconfig'\n",
        "testing/test_iniconfig.py": "from iniconfig import IniConfig\n\n\n"
                                     "def test_empty():\n    assert IniConfig('x', data='')\n"})
    assert cli("init", cwd=repo).returncode == 0
    assert '\ncommands = ["python -m pytest"]\n' in (repo / ".agentctl.toml").read_text()


def test_init_at_a_terminal_proposes_the_detected_test_command(repo: Path, home: Path) -> None:
    (repo / "tests" / "conftest.py").write_text("")
    with terminal(80, repo, {"AGENTCTL_HOME": str(home)}) as term:
        term.type("agentctl init")
        term.wait_for("Verify every run with python -m pytest?")
        term.type("y")
        term.wait_for("state home:")
    assert '\ncommands = ["python -m pytest"]\n' in (repo / ".agentctl.toml").read_text()


def test_a_run_warns_of_uncommitted_changes_and_events_say_who_did_what(
        agentctl: Cli, repo: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(toml_plan({"tool": "fs.write", "path": ".github/workflows/deploy.yml",
                               "content": "name: pwned\n"}))
    task = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                    "--instruction", "x", "--json", env={"AGENTCTL_USER": "alice"}).json()
    (repo / "src" / "app.py").write_text("# edited, not committed\n")
    started = agentctl("run", "start", task["taskId"], "--agent",  # type: ignore[index]
                       f"script:{plan}", "--json")
    assert f"warning: {repo} has uncommitted changes (1 file)" in started.stderr
    logged = agentctl("events", "--task", task["taskId"]).stdout  # type: ignore[index]
    assert re.search(r"TaskSubmitted\s+task_\w+  by alice$", logged, re.MULTILINE), logged
    assert re.search(r"ToolCallDenied\s+run_\w+  fs.write DENIED_BY_POLICY \(.*"
                     r"\.github/workflows/deploy\.yml", logged), logged
    subprocess.run(["git", "-C", str(repo), "checkout", "--", "."], check=True)
    again = agentctl("run", "start", task["taskId"], "--agent", "noop", "--json")  # type: ignore[index]
    assert "uncommitted" not in again.stderr



def test_task_submit_run_looks_at_the_checkout_while_the_task_is_stored(
        agentctl: Cli, repo: Path, home: Path, tmp_path: Path) -> None:
    """`task submit --run` starts its `git status` of the checkout as soon as the base ref is
    resolved, before the first write (which creates the state database): seen by a `git` on
    PATH that notes, for `status`, whether the database was there yet. The warning it leads to
    is the same as `run start`'s."""
    shims = tmp_path / "shims"
    shims.mkdir()
    seen = tmp_path / "status-saw"
    real_git = subprocess.run(["which", "git"], capture_output=True, text=True,
                              check=True).stdout.strip()
    (shims / "git").write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" status --porcelain "*) if [ -e "{home}/agentctl.db" ]; '
        f'then echo database >> "{seen}"; else echo none >> "{seen}"; fi;; esac\n'
        f'exec {real_git} "$@"\n')
    (shims / "git").chmod(0o755)
    (repo / "src" / "app.py").write_text("# edited, not committed\n")
    submitted = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                         "--instruction", "x", "--run", "--agent", "noop", "--json",
                         env={"PATH": f"{shims}:{os.environ['PATH']}"})
    assert f"warning: {repo} has uncommitted changes (1 file)" in submitted.stderr
    assert seen.read_text().split() == ["none"]


def test_looking_for_uncommitted_changes_leaves_the_checkouts_index_as_it_was(
        agentctl: Cli, repo: Path) -> None:
    """A plain `git status` refreshes the index and writes it back when a file's times changed
    (here: touched, content the same); agentctl's look must not write the person's index."""
    index = repo / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    os.utime(repo / "src" / "app.py", ns=(10**18, 10**18))
    submitted = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                         "--instruction", "x", "--run", "--agent", "noop", "--json")
    assert submitted.returncode != 2 and "has uncommitted changes" not in submitted.stderr
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before

def test_task_submit_run_takes_interactive(cli: Cli, repo: Path, home: Path,
                                           error_line: Callable[[str], str],
                                           state_of: Callable[[Path], object]) -> None:
    args = ("task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction", "x")
    alone = cli(*args, "--interactive")
    assert alone.returncode == 2 and "need --run" in error_line(alone.stderr)
    unattended = cli(*args, "--run", "--agent", "noop", "--interactive", input="")
    assert unattended.returncode == 2
    assert "--interactive needs a terminal" in error_line(unattended.stderr)
    assert state_of(home) is None  # refused before anything was stored
