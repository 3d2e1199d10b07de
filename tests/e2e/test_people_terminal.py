"""What a person sees at a real terminal (a tmux pane at 80 and 120 columns): the demo's table,
the listings, `verdict explain` through a pager, `run diff` in colour, the dialog of `task
submit`, and defaults that follow the repository you stand in."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENTCTL, GIT_IDENTITY, Result
from tests.e2e.terminal_support import Terminal, terminal

SCENARIOS = {
    "migration": ("SUCCESS_NEEDS_REVIEW", "ELIGIBLE_AFTER_HUMAN_APPROVAL"),
    "workflow edit": ("FAILED_POLICY", "NOT_ELIGIBLE"),
    "dependency upgrade": ("FAILED_INFRASTRUCTURE", "NOT_ELIGIBLE"),
    "refund rounding": ("FAILED_VERIFICATION", "NOT_ELIGIBLE"),
}
HEX64 = re.compile(r"\b[0-9a-f]{64}\b")


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`agentctl demo --keep` typed at an 80-column terminal, once for the module."""
    root = tmp_path_factory.mktemp("people-terminal")
    home, scratch = root / "home", root / "tmp"
    scratch.mkdir()
    env = {"AGENTCTL_HOME": str(home), "TMPDIR": str(scratch), **GIT_IDENTITY}
    with terminal(80, root, env) as term:
        screen, code = term.run(f"agentctl demo --keep --home {home}", timeout=240)
    match = re.search(r"sample repository: (\S+)", screen)
    assert code == 0 and match, screen
    return {"screen": screen, "home": home, "root": root, "env": env,
            "sample": Path(match.group(1))}


def at(shown: dict[str, Any], width: int, command: str, cwd: Path | None = None,
       **env: str) -> tuple[str, int]:
    with terminal(width, cwd or shown["root"], {**shown["env"], **env}) as term:
        return term.run(command)


def cli(shown: dict[str, Any], *args: str, cwd: Path | None = None, **env: str) -> Result:
    done = subprocess.run([AGENTCTL, *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd or shown["root"], env={**_environ(), **shown["env"], **env})
    return Result(done.returncode, done.stdout, done.stderr)


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "AGENTCTL_CONFIG"}


def test_the_demo_table_shows_every_scenario_s_verdict_and_eligibility_at_80_columns(
        shown: dict[str, Any]) -> None:
    rows = shown["screen"].splitlines()
    for scenario, (verdict, eligibility) in SCENARIOS.items():
        row = next(line for line in rows if line.startswith(scenario + " "))
        assert verdict in row.split() and eligibility in row.split(), shown["screen"]
        assert len(row) <= 80, row
    assert "export AGENTCTL_HOME=" not in shown["screen"]  # this shell's home is the demo's
    assert re.search(r"^  agentctl verdict explain run_\w+$", shown["screen"], re.MULTILINE)


@pytest.mark.parametrize("width", [80, 120])
def test_run_list_keeps_whole_enums_and_short_ids_that_resolve(shown: dict[str, Any],
                                                               width: int) -> None:
    screen, code = at(shown, width, "agentctl run list")
    assert code == 0
    assert screen.splitlines()[0].split()[:2] == ["RUN", "#"]
    for verdict, eligibility in SCENARIOS.values():
        assert re.search(rf"\b{verdict}\s+{eligibility}\b", screen), screen
    assert "…" not in screen
    short = re.findall(r"^(run_\w+) ", screen, re.MULTILINE)
    assert len(short) == 4 and all(len(s) < len("run_") + 26 for s in short), screen
    for prefix in short:
        assert cli(shown, "run", "show", prefix, "--json").returncode == 0
    assert "payments-service" in screen  # the repository each run worked on


def test_full_shows_whole_ids(shown: dict[str, Any]) -> None:
    listed = cli(shown, "run", "list", "--full").stdout
    assert len(re.findall(r"^run_\w{26} ", listed, re.MULTILINE)) == 4, listed


@pytest.mark.parametrize("width", [80, 120])
def test_task_and_artifact_lists_put_long_text_on_an_indented_line(shown: dict[str, Any],
                                                                   width: int) -> None:
    tasks, _ = at(shown, width, "agentctl task list")
    assert re.search(r"^    Migrate to new_feature_flags$", tasks, re.MULTILINE), tasks
    artifacts, _ = at(shown, width, "agentctl artifact list")
    lines = artifacts.splitlines()
    assert lines[0].split()[:2] == ["NAME", "SIZE"]
    assert any(line.startswith("patch.diff ") for line in lines), artifacts


def test_verdict_explain_is_short_by_default_and_paged_only_on_a_terminal(
        shown: dict[str, Any], tmp_path: Path) -> None:
    log = tmp_path / "paged.log"
    pager = f"sh -c 'cat > {log}; echo PAGER-RAN'"
    screen, code = at(shown, 80, "agentctl verdict explain", AGENTCTL_PAGER=pager)
    assert code == 0 and "PAGER-RAN" in screen, screen
    paged = log.read_text()
    assert "verifier-report.json" in paged and not HEX64.search(paged), paged
    assert len(paged.splitlines()) < 50  # with the failed check's exception and output end
    piped = cli(shown, "verdict", "explain", AGENTCTL_PAGER=pager)
    assert "PAGER-RAN" not in piped.stdout and "verifier-report.json" in piped.stdout
    unpaged, _ = at(shown, 80, "agentctl verdict explain --no-pager", AGENTCTL_PAGER=pager)
    assert "PAGER-RAN" not in unpaged and "verifier-report.json" in unpaged
    assert HEX64.search(cli(shown, "verdict", "explain", "--full").stdout)
    assert not HEX64.search(cli(shown, "verdict", "show").stdout)
    assert HEX64.search(cli(shown, "verdict", "show", "--full").stdout)


def test_artifact_show_takes_a_run_and_a_name(shown: dict[str, Any]) -> None:
    artifacts = cli(shown, "artifact", "list", "--json").json()
    patch = next(a for a in artifacts if a["name"] == "patch.diff")  # type: ignore[union-attr]
    by_id = cli(shown, "artifact", "show", patch["artifactId"]).stdout
    # a prefix reaching into the random part: the demo's runs can share their first 256 ms
    by_name = cli(shown, "artifact", "show", patch["runId"][:20], "patch.diff")
    assert by_name.returncode == 0 and by_name.stdout == by_id
    missing = cli(shown, "artifact", "show", patch["runId"], "nothing.txt")
    assert missing.returncode == 2 and "has no artifact named 'nothing.txt'" in missing.stderr
    assert "verifier-report.json" in missing.stderr  # it names what there is


def test_run_diff_is_the_patch_coloured_on_a_terminal_and_plain_in_a_pipe(
        shown: dict[str, Any]) -> None:
    run = cli(shown, "run", "list", "--json").json()[-1]["runId"]  # type: ignore[index]
    piped = cli(shown, "run", "diff", run)
    assert piped.returncode == 0 and piped.stdout.startswith("diff --git")
    assert "\x1b[" not in piped.stdout
    with terminal(80, shown["root"], {**shown["env"], "AGENTCTL_PAGER": "cat"}) as term:
        term.type(f"agentctl run diff {run}")
        term.wait_for("@@")
        coloured = term._tmux("capture-pane", "-p", "-e", "-t", "t")
    assert re.search(r"\x1b\[3[12]m[+-]", coloured), coloured


def test_without_an_id_commands_mean_the_newest_run_of_the_repository_you_stand_in(
        shown: dict[str, Any], tmp_path: Path, repo_maker: Callable[..., Path]) -> None:
    newest = cli(shown, "run", "list", "--json").json()[0]["runId"]  # type: ignore[index]
    assert cli(shown, "run", "show", "--json", cwd=shown["sample"]).json()[  # type: ignore[index]
        "runId"] == newest
    other = repo_maker(tmp_path / "other", {"README.md": "x\n"})
    elsewhere = cli(shown, "run", "show", cwd=other)
    assert elsewhere.returncode == 2 and f"no runs of {other}" in elsewhere.stderr
    for pr_command in (("pr", "create"), ("pr", "status")):  # a PR too: never another repo's run
        refused = cli(shown, *pr_command, cwd=other)
        assert refused.returncode == 2 and f"no runs of {other}" in refused.stderr, refused.stderr
    assert cli(shown, "run", "list", "--repo", str(other), "--json").json() == []
    assert len(cli(shown, "run", "list", "--repo", str(shown["sample"] / "payments"),
                   "--json").json()) == 4  # type: ignore[arg-type]
    assert len(cli(shown, "task", "list", "--repo", str(shown["sample"]), "--json"
                   ).json()) == 4  # type: ignore[arg-type]


def test_verdict_approve_is_by_git_s_user_name_by_default(
        shown: dict[str, Any], copy_home: Callable[[Path], Path], tmp_path: Path) -> None:
    home = copy_home(shown["home"])
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Dana Reviewer\n")
    runs = cli(shown, "run", "list", "--json", AGENTCTL_HOME=str(home)).json()
    waiting = next(r for r in runs if r["status"] == "NEEDS_APPROVAL")  # type: ignore[union-attr]
    approved = cli(shown, "verdict", "approve", waiting["runId"], "--reason", "read it",
                   "--json", AGENTCTL_HOME=str(home), GIT_CONFIG_GLOBAL=str(gitconfig))
    assert approved.returncode == 0, approved.stderr
    assert approved.json()["by"] == "Dana Reviewer"  # type: ignore[index]


# --- the dialog -----------------------------------------------------------------------------

def answer(term: Terminal, question: str, reply: str = "") -> None:
    term.wait_for(question, across_lines=True)
    term.type(reply)


def test_task_submit_at_a_terminal_asks_and_keeps_the_exchange_in_a_session(
        tmp_path: Path, repo_maker: Callable[..., Path]) -> None:
    repo = repo_maker(tmp_path / "calc", {"calc.py": "x = 1\n", "tests/conftest.py": "",
                                         "tests/test_calc.py": "def test_x():\n    pass\n"})
    env = {"AGENTCTL_HOME": str(tmp_path / "home"), "AGENTCTL_USER": "erin"}
    with terminal(80, repo, env) as term:
        term.type("agentctl task submit --label via=dialog")
        answer(term, "What kind of change is it?", "bug_fix")
        term.wait_for("What should change?")
        between = datetime.now(UTC)  # the type is answered, the instruction not yet
        term.type("Upgrade Jackson")
        answer(term, "Which paths may change?", "src/**")
        screen = term.wait_for("(python -m pytest):")  # proposed from what the repo holds
        term.type("")
        term.wait_for("supervised_pr: a PR after a person approves")  # each level explained
        answer(term, "How far may agentctl go?", "draft_pr")
        summary = term.wait_for("Submit this task?")
        term.type("y")
        term.wait_for("next: agentctl run start")
    assert "Upgrade Jackson" in summary and "draft_pr" in summary
    assert str(repo) in summary.replace("\n", "")  # the repository you stand in, not asked
    # the config's forbidden paths stand: not asked
    assert "Which repository?" not in screen and "must not change" not in screen
    listed = subprocess.run([AGENTCTL, "task", "list", "--json"], capture_output=True,
                            text=True, env={**_environ(), **env}, check=True)
    [task] = json.loads(listed.stdout)
    assert (task["repository"], task["taskType"], task["instruction"], task["autonomyLevel"],
            task["allowedPaths"], task["verificationCommands"]) == (
        str(repo), "bug_fix", "Upgrade Jackson", "draft_pr", ["src/**"], ["python -m pytest"])
    session = subprocess.run([AGENTCTL, "session", "show", task["sessionId"], "--json"],
                             capture_output=True, text=True, env={**_environ(), **env},
                             check=True)
    said = json.loads(session.stdout)["messages"]
    messages = [(m["role"], m["content"]) for m in said]
    assert messages[:4] == [("system", "What kind of change is it?"), ("user", "bug_fix"),
                            ("system", "What should change?"), ("user", "Upgrade Jackson")]
    assert messages[-2:] == [("system", "Submit this task?"), ("user", "yes")]
    assert "python -m pytest" in screen
    # each message is stamped when it was said, not all with the submit's moment
    times = [datetime.fromisoformat(m["createdAt"].replace("Z", "+00:00")) for m in said]
    assert times == sorted(times)
    assert times[1] < between < times[3], (times, between)


def test_the_dialog_takes_its_defaults_from_the_config_and_asks_only_what_is_missing(
        tmp_path: Path, repo_maker: Callable[..., Path]) -> None:
    repo = repo_maker(tmp_path / "calc", {"calc.py": "x = 1\n", "tests/conftest.py": ""})
    config = tmp_path / "agentctl.toml"
    config.write_text('[policy]\ndefault_autonomy = "dry_run"\n\n[boundary]\n'
                      'allowed = ["calc.py"]\n\n[verification]\ncommands = ["true"]\n')
    env = {"AGENTCTL_HOME": str(tmp_path / "home"), "AGENTCTL_CONFIG": str(config)}
    with terminal(80, repo, env) as term:
        term.type("agentctl task submit --type bug_fix --forbid 'docs/**'")
        answer(term, "What should change?", "Round half up")
        screen = term.wait_for("How far may agentctl go?")
        term.type("")  # the config's level
        term.wait_for("Submit this task?")
        term.type("y")
        term.wait_for("next: agentctl run start")
    assert "How far may agentctl go? [dry_run/draft_pr/supervised_pr/auto_pr] (dry_run)" \
        in screen.replace("\n", ""), screen
    for question in ("Which repository?", "What kind of change", "Which paths",
                     "Which commands verify"):
        assert question not in screen, screen
    listed = subprocess.run([AGENTCTL, "task", "list", "--json"], capture_output=True,
                            text=True, env={**_environ(), **env}, check=True)
    [task] = json.loads(listed.stdout)
    assert (task["repository"], task["autonomyLevel"], task["forbiddenPaths"]) == (
        str(repo), "dry_run", ["docs/**"])


def test_submit_with_a_session_reuses_what_it_settled_and_the_repository_you_stand_in(
        cli: Callable[..., Result], repo: Path) -> None:
    session = cli("session", "start", "--title", "jackson", "--json").json()
    session_id = session["sessionId"]  # type: ignore[index]
    assert cli("session", "say", session_id, "Upgrade Jackson").returncode == 0
    submitted = cli("task", "submit", "--session", session_id, "--type",
                    "dependency_upgrade", "--json", cwd=repo / "src")
    assert submitted.returncode == 0, submitted.stderr
    task = submitted.json()
    assert (task["instruction"], task["repository"]) == ("Upgrade Jackson",  # type: ignore[index]
                                                         str(repo))


def test_without_a_terminal_what_is_missing_is_still_one_line_and_exit_2(
        cli: Callable[..., Result], repo: Path, error_line: Callable[[str], str]) -> None:
    refused = cli("task", "submit", "--type", "bug_fix", cwd=repo)
    assert refused.returncode == 2
    assert "instruction is empty" in error_line(refused.stderr)
