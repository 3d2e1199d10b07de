"""Tool calls the guards deny are recorded with their decision and rule and never executed; what
slips past the guard (an allowed program writing or renaming files) is caught by the boundary.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.runs_support import (
    CALC_FILES,
    UNITTEST,
    Bench,
    diff_of,
    in_parallel,
    step_of,
    tool_steps,
)

# The defaults, plus one rule denying a script that would leave a marker file behind. The guard
# is tested on its own: unsandboxed, the allowed control script can leave its marker outside the
# workspace, so the absence of the denied ones means the guard stopped them (test_sandbox covers
# what the sandbox stops).
CONFIG = """\
[sandbox]
mode = "off"
[tools.commands]
deny = ["git push *", "git remote *", "git config *", "curl *", "wget *", "ssh *", "scp *",
        "sudo *", "rm -rf /*", "python3 mark.py *"]
"""
MARK = "import sys\nfrom pathlib import Path\n\nPath(sys.argv[1]).write_text('executed')\n"
ENV_SECRET = "s3cr3t-from-dotenv"
FILES = {**CALC_FILES, "mark.py": MARK, "control.py": MARK, ".env": f"API_KEY={ENV_SECRET}\n"}
DOCSTRING = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
             "new": "def add(a, b):\n    \"\"\"The sum.\"\"\"\n"}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_git, run_agentctl
            ) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("guards")
    repo = repo_maker(root / "calc", FILES)
    (root / "outside").mkdir()
    (repo / "escape").symlink_to(root / "outside")  # a committed symlink out of the checkout
    run_git(repo, "add", "escape")
    run_git(repo, "commit", "-q", "-m", "add a symlink")
    bench = Bench(root, run_agentctl)
    bench.config(CONFIG)
    marker, control = root / "marker.txt", root / "control.txt"

    denials = bench.plan(
        "denials.toml",
        {"tool": "shell.run", "command": f"python3 control.py {control}"},
        {"tool": "fs.write", "path": "../escaped.txt", "content": "out"},
        {"tool": "fs.write", "path": str(root / "escaped.txt"), "content": "out"},
        {"tool": "fs.write", "path": "escape/escaped.txt", "content": "out"},
        {"tool": "fs.read", "path": ".env"},
        {"tool": "fs.write", "path": ".github/workflows/x.yml", "content": "name: x\n"},
        {"tool": "shell.run", "command": "git push origin main"},
        {"tool": "shell.run", "command": f"python3 mark.py {marker}"},
        {"tool": "fs.rename", "path": "README.md", "to": ".github/README.md"},
        {"tool": "shell.run", "command": f"cat README.md > {marker}"},
        {"tool": "shell.run", "command": f"touch {marker}"},
        DOCSTRING,
    )

    def git_mv(clone: Path) -> None:
        run_git(clone, "mv", "README.md", ".github/README.md")

    def move_out(clone: Path) -> None:
        run_git(clone, "mv", ".github/workflows/deploy.yml", "deploy.yml")

    into = bench.cwd / "rename-into.diff"
    into.write_text(diff_of(repo, root / "scratch-into", git_mv, run_git))
    out_of = bench.cwd / "rename-out-of.diff"
    out_of.write_text(diff_of(repo, root / "scratch-out", move_out, run_git))
    shell_rename = bench.plan("shell-rename.toml", {
        "tool": "shell.run",
        "command": "python3 -c \"import os; os.rename('README.md', '.github/README.md')\""})

    scenarios = {
        "denials": f"script:{denials}",
        "rename-patch": f"patch:{into}",
        "rename-out-of": f"patch:{out_of}",
        "rename-shell": f"script:{shell_rename}",
    }

    def play(agent: str) -> dict[str, Any]:
        keep = ("--keep-workspace",) if agent == scenarios["denials"] else ()
        return bench.start(bench.submit(repo, "--verify", UNITTEST), agent, *keep)

    runs = dict(zip(scenarios, in_parallel(play, scenarios.values()), strict=True))
    trees = dict(zip(runs, in_parallel(bench.tree, [r["runId"] for r in runs.values()]),
                     strict=True))
    workspace = Path(step_of(trees["denials"], "PREPARE_WORKSPACE")["attributes"]["path"])
    yield {"bench": bench, "root": root, "repo": repo, "runs": runs, "trees": trees,
           "marker": marker, "control": control, "workspace": workspace}
    shutil.rmtree(workspace, ignore_errors=True)


def calls(guarded: dict[str, Any], name: str = "denials") -> list[dict[str, Any]]:
    return [step["toolCall"] | {"stepStatus": step["status"]}
            for step in tool_steps(guarded["trees"][name])]


def test_an_allowed_command_runs_so_the_absence_of_a_marker_means_something(
        guarded: dict[str, Any]) -> None:
    first = calls(guarded)[0]
    assert (first["decision"], first["matchedRule"]) == ("ALLOWED", "allow: python3 *")
    assert guarded["control"].read_text() == "executed"


def test_tool_call_denied_by_command_guard_is_recorded_but_not_executed(
        guarded: dict[str, Any]) -> None:
    call = next(c for c in calls(guarded) if "mark.py" in c["argumentsJson"])
    assert call["decision"] == "DENIED_BY_COMMAND_GUARD"
    assert call["matchedRule"] == "deny: python3 mark.py *"
    assert call["denialReason"] and call["result"] is None
    assert call["stepStatus"] == "DENIED"
    assert not guarded["marker"].exists()
    leftovers = [Path(folder) / name for folder, _, names in os.walk(guarded["root"])
                 for name in names if name == "marker.txt"]
    assert leftovers == []


def test_git_push_is_denied_by_the_default_deny_rule(guarded: dict[str, Any]) -> None:
    call = next(c for c in calls(guarded) if "git push" in c["argumentsJson"])
    assert (call["toolName"], call["decision"], call["matchedRule"]) == (
        "shell.run", "DENIED_BY_COMMAND_GUARD", "deny: git push *")
    assert call["result"] is None


def test_a_write_outside_the_workspace_is_denied_by_the_path_guard_and_not_executed(
        guarded: dict[str, Any]) -> None:
    escapes = [c for c in calls(guarded) if "escaped.txt" in c["argumentsJson"]]
    assert len(escapes) == 3  # `../escaped.txt`, an absolute path, through a symlink
    for call in escapes:
        assert call["decision"] == "DENIED_BY_PATH_GUARD"
        assert call["matchedRule"] and call["denialReason"]
        assert call["result"] is None
    workspace = guarded["workspace"]
    assert (workspace / "repo" / "calc").is_dir()  # kept with --keep-workspace, for this check
    assert not (workspace / "escaped.txt").exists()
    assert not (guarded["root"] / "escaped.txt").exists()
    assert list((guarded["root"] / "outside").iterdir()) == []


def test_reading_a_secret_file_is_denied_and_its_content_is_recorded_nowhere(
        guarded: dict[str, Any]) -> None:
    call = next(c for c in calls(guarded) if c["toolName"] == "fs.read")
    assert (call["decision"], call["matchedRule"]) == ("DENIED_BY_POLICY", "secret: .env")
    assert call["result"] is None
    run_id = guarded["runs"]["denials"]["runId"]
    bench = guarded["bench"]
    assert ENV_SECRET not in json.dumps([guarded["trees"]["denials"], bench.events(run_id)])


def test_a_write_to_a_forbidden_path_is_denied_naming_the_forbidden_glob(
        guarded: dict[str, Any]) -> None:
    call = next(c for c in calls(guarded) if ".github/workflows/x.yml" in c["argumentsJson"])
    assert call["decision"] == "DENIED_BY_POLICY"
    assert call["matchedRule"] == "forbidden: .github/**"
    assert call["result"] is None


def test_a_rename_into_a_forbidden_path_is_denied_by_the_tool_guard(
        guarded: dict[str, Any]) -> None:
    call = next(c for c in calls(guarded) if c["toolName"] == "fs.rename")
    assert call["decision"] == "DENIED_BY_POLICY"
    assert call["matchedRule"] == "forbidden: .github/**"


def test_a_command_with_shell_metacharacters_is_refused_before_any_rule(
        guarded: dict[str, Any]) -> None:
    call = next(c for c in calls(guarded) if "cat README.md" in c["argumentsJson"])
    assert call["decision"] == "DENIED_BY_COMMAND_GUARD"
    assert "metacharacter" in (call["matchedRule"] + call["denialReason"])
    assert call["result"] is None


def test_a_command_no_rule_matches_is_denied_and_names_the_rule_that_decided_it(
        guarded: dict[str, Any]) -> None:
    call = next(c for c in calls(guarded) if "touch" in c["argumentsJson"])
    assert call["decision"] == "DENIED_BY_COMMAND_GUARD"
    assert call["result"] is None
    assert call["matchedRule"]


def test_the_human_tree_shows_each_denial_with_its_decision_and_rule(
        guarded: dict[str, Any]) -> None:
    shown = guarded["bench"].cli("run", "show", guarded["runs"]["denials"]["runId"],
                                 "--tree").stdout
    for decision, rule in [("DENIED_BY_COMMAND_GUARD", "deny: git push *"),
                           ("DENIED_BY_COMMAND_GUARD", "deny: python3 mark.py *"),
                           ("DENIED_BY_POLICY", "forbidden: .github/**"),
                           ("DENIED_BY_POLICY", "secret: .env"),
                           ("DENIED_BY_PATH_GUARD", "outside")]:
        assert any(decision in line and rule in line for line in shown.splitlines()), rule


def test_every_denial_appears_in_the_event_log(guarded: dict[str, Any]) -> None:
    denied = {c["toolCallId"] for c in calls(guarded) if c["decision"] != "ALLOWED"}
    events = guarded["bench"].events(guarded["runs"]["denials"]["runId"])
    logged = {e["payload"].get("toolCallId") for e in events if e["type"] == "ToolCallDenied"}
    assert len(denied) == 10
    assert logged == denied


def test_denied_calls_leave_nothing_in_the_patch(guarded: dict[str, Any]) -> None:
    run = guarded["runs"]["denials"]
    collect = step_of(guarded["trees"]["denials"], "COLLECT_ARTIFACTS")
    assert collect["attributes"]["files"] == 1
    assert collect["attributes"]["boundaryPassed"] is True
    patch = next(a for a in collect["artifacts"] if a["name"] == "patch.diff")
    text = guarded["bench"].artifact_text(patch["artifactId"])
    assert "calc/__init__.py" in text and ".github" not in text
    assert run["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW")


@pytest.mark.parametrize("name", ["rename-patch", "rename-shell"])
def test_a_rename_from_an_allowed_path_into_a_forbidden_one_is_failed_policy(
        guarded: dict[str, Any], name: str) -> None:
    run = guarded["runs"][name]
    assert run["exitCode"] == 1
    assert (run["verdict"]["status"], run["verdict"]["prEligibility"]) == (
        "FAILED_POLICY", "NOT_ELIGIBLE")
    assert any(".github/README.md" in reason for reason in run["verdict"]["reasons"])


def test_a_rename_out_of_a_forbidden_path_is_failed_policy_too(guarded: dict[str, Any]) -> None:
    run = guarded["runs"]["rename-out-of"]
    assert run["verdict"]["status"] == "FAILED_POLICY"
    assert any(".github/workflows/deploy.yml" in reason for reason in run["verdict"]["reasons"])

