"""The life of a run from the command line: numbering, base commits, the user's repository, the
workspace, "the newest run", the decision chain, the event log, refusals and cancellation.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench, repo_snapshot, step_of

CHAIN = ["boundary", "apply", "verification", "baseline", "judge", "autonomy", "eligibility",
         "approvals"]
LIFE = ["RunCreated", "RunQueued", "LeaseAcquired", "AttemptStarted", "WorkspacePrepared",
        "ToolCallRequested", "PatchProduced", "VerifierStarted", "VerifierCompleted",
        "JudgeCompleted", "VerdictDecided", "RunCompleted"]
DOCSTRING = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
             "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_git, run_agentctl
            ) -> Iterator[dict[str, Any]]:
    """One task run twice: once on the initial commit, once after main moved (workspace kept).

    The first run's plan touches the repository in every way a plan can (edit, create, delete,
    rename, a command that writes), so the snapshots around it show the user's clone is untouched.
    """
    root = tmp_path_factory.mktemp("history")
    repo = repo_maker(root / "calc", CALC_FILES)
    bench = Bench(root, run_agentctl)
    busy = bench.plan(
        "busy.toml", DOCSTRING,
        {"tool": "fs.write", "path": "calc/extra.py", "content": "EXTRA = 1\n"},
        {"tool": "fs.rename", "path": "README.md", "to": "README.rst"},
        {"tool": "fs.delete", "path": "calc/config/__init__.py"},
        {"tool": "shell.run", "command": "python3 -c \"open('notes.txt', 'w').write('x')\""},
        {"tool": "shell.run", "command": "git status --short"},
    )
    simple = bench.plan("simple.toml", DOCSTRING)
    task = bench.submit(repo, "--verify", UNITTEST)
    before = repo_snapshot(repo, run_git)
    first_commit = run_git(repo, "rev-parse", "HEAD")
    first = bench.start(task, f"script:{busy}")
    after = repo_snapshot(repo, run_git)
    (repo / "NEWS.md").write_text("moved on\n")
    run_git(repo, "add", "NEWS.md")
    run_git(repo, "commit", "-q", "-m", "main moves on")
    second = bench.start(task, f"script:{simple}", "--keep-workspace")
    trees = [bench.tree(first["runId"]), bench.tree(second["runId"])]
    kept = Path(step_of(trees[1], "PREPARE_WORKSPACE")["attributes"]["path"])
    yield {"bench": bench, "repo": repo, "task": task, "runs": [first, second], "trees": trees,
           "before": before, "after": after, "commits": [first_commit,
                                                         run_git(repo, "rev-parse", "HEAD")],
           "kept": kept}
    shutil.rmtree(kept, ignore_errors=True)


def test_starting_one_task_twice_numbers_its_runs_1_and_2(history: dict[str, Any]) -> None:
    first, second = history["runs"]
    assert [first["number"], second["number"]] == [1, 2]
    assert first["taskId"] == second["taskId"] == history["task"]
    assert first["runId"] != second["runId"]


def test_a_rerun_after_the_base_branch_moved_binds_the_new_commit(
        history: dict[str, Any]) -> None:
    (first, second), (old, new) = history["runs"], history["commits"]
    assert old != new
    assert (first["baseCommit"], second["baseCommit"]) == (old, new)
    assert first["executionSpec"]["baseCommit"] == old
    assert second["executionSpec"]["baseCommit"] == new
    assert first["specDigest"] != second["specDigest"]
    clone = step_of(history["trees"][1], "CLONE_REPOSITORY")
    assert clone["attributes"]["baseCommit"] == new


def test_a_run_leaves_the_users_repository_untouched(history: dict[str, Any]) -> None:
    first = history["runs"][0]
    assert first["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW")
    collect = step_of(history["trees"][0], "COLLECT_ARTIFACTS")
    assert collect["attributes"]["files"] >= 5  # the plan really changed its workspace
    assert history["after"] == history["before"]


def test_a_run_removes_its_workspace_unless_told_to_keep_it(history: dict[str, Any]) -> None:
    removed = Path(step_of(history["trees"][0], "PREPARE_WORKSPACE")["attributes"]["path"])
    assert not removed.exists()
    kept = history["kept"]
    assert kept.is_dir()
    assert '"""The sum of a and b."""' in next(kept.rglob("calc/__init__.py")).read_text()


def test_run_show_without_an_id_means_the_newest_run(history: dict[str, Any]) -> None:
    newest = history["runs"][1]["runId"]
    assert history["bench"].json("run", "show")["runId"] == newest
    assert history["bench"].json("run", "show", "--tree")["attempts"]


def test_verdict_show_and_explain_without_an_id_mean_the_newest_run(
        history: dict[str, Any]) -> None:
    newest = history["runs"][1]
    shown = history["bench"].json("verdict", "show")
    explained = history["bench"].json("verdict", "explain")
    assert shown["runId"] == explained["runId"] == newest["runId"]
    assert shown["verdictId"] == newest["verdict"]["verdictId"]


def test_verdict_explain_walks_the_whole_chain_with_hashed_evidence(
        history: dict[str, Any]) -> None:
    bench, run = history["bench"], history["runs"][0]
    explained = bench.explain(run["runId"])
    assert [link["check"] for link in explained["chain"]] == CHAIN
    assert all(set(link) >= {"check", "passed", "detail", "evidence"}
               for link in explained["chain"])
    entries = [e for link in explained["chain"] for e in link["evidence"]]
    entries += explained["evidence"]
    assert entries
    for entry in entries:
        assert entry["type"] and entry["uri"]
        blob = bench.home / entry["uri"]
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == entry["sha256"]


def test_verdict_explain_names_the_step_that_edited_each_file(history: dict[str, Any]) -> None:
    bench, run, tree = history["bench"], history["runs"][0], history["trees"][0]
    edited = bench.explain(run["runId"])["editedBy"]
    steps = {step["stepId"]: step for steps in tree["attempts"] for step in steps["steps"]}
    replaced = edited["calc/__init__.py"]
    assert [(e["toolName"], e["changeType"], e["additions"], e["deletions"]) for e in replaced] \
        == [("fs.replace", "MODIFIED", 1, 0)]
    assert steps[replaced[0]["stepId"]]["changedFiles"] == [
        {"path": "calc/__init__.py", "changeType": "MODIFIED", "additions": 1, "deletions": 0}]
    assert edited["README.rst"][0]["changeType"] == "RENAMED"
    assert edited["notes.txt"][0]["toolName"] == "shell.run"


def test_a_successful_run_logs_its_life_in_order(history: dict[str, Any]) -> None:
    run = history["runs"][0]
    assert run["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW")
    events = history["bench"].events(run["runId"])
    types = [event["type"] for event in events]
    position = 0
    for wanted in LIFE:
        assert wanted in types[position:], (wanted, types)
        position = types.index(wanted, position) + 1
    assert types[-1] == "RunCompleted"
    assert {event["runId"] for event in events} == {run["runId"]}
    assert all(b["prevHash"] == a["hash"] for a, b in pairwise(events)
               if b["seq"] == a["seq"] + 1)


def test_the_spec_digest_is_stamped_on_tool_calls_artifacts_and_the_verdict(
        history: dict[str, Any]) -> None:
    bench, run = history["bench"], history["runs"][0]
    digest = run["specDigest"]
    tree = history["trees"][0]
    calls = [s["toolCall"] for s in tree["attempts"][0]["steps"] if s["toolCall"]]
    assert calls and {c["specDigest"] for c in calls} == {digest}
    assert {a["specDigest"] for a in bench.artifacts(run["runId"])} == {digest}
    assert bench.json("verdict", "show", run["runId"])["specDigest"] == digest


# --- refusals: nothing is stored --------------------------------------------------------------

@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl) -> dict[str, Any]:
    """A home with one ready task and one policy-denied task, and no run."""
    root = tmp_path_factory.mktemp("plain")
    repo = repo_maker(root / "calc", CALC_FILES)
    bench = Bench(root, run_agentctl)
    ready = bench.submit(repo)
    denied = bench.cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                       "--instruction", "ship it", "--autonomy", "auto_pr", "--json",
                       expect=(2,)).json()
    assert denied["status"] == "POLICY_DENIED"
    return {"bench": bench, "repo": repo, "ready": ready, "denied": denied}


def test_policy_denied_task_cannot_create_a_run(plain: dict[str, Any], error_line) -> None:  # type: ignore[no-untyped-def]
    bench, denied = plain["bench"], plain["denied"]
    events_before = bench.query("SELECT count(*) FROM event")
    result = bench.cli("run", "start", denied["taskId"], "--agent", "noop", expect=(2,))
    line = error_line(result.stderr)
    assert "POLICY_DENIED" in line
    assert denied["statusReason"] in line
    assert result.stdout == ""
    assert bench.run_count() == 0
    assert bench.json("run", "list") == []
    assert bench.query("SELECT count(*) FROM event") == events_before


MALFORMED = {
    "unknown-tool": ('[[step]]\ntool = "fs.frobnicate"\npath = "x"\n', "fs.frobnicate"),
    "missing-argument": ('[[step]]\ntool = "fs.replace"\npath = "calc/__init__.py"\nold = "a"\n',
                         "new"),
    "invalid-toml": ('[[step]\ntool = "fs.read"\n', "TOML"),
    "no-steps": ('title = "nothing to do"\n', "step"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_plan_is_refused_in_one_line_and_no_run_is_stored(
        plain: dict[str, Any], case: str, error_line) -> None:  # type: ignore[no-untyped-def]
    bench = plain["bench"]
    text, problem = MALFORMED[case]
    plan = bench.cwd / f"{case}.toml"
    plan.write_text(text)
    result = bench.cli("run", "start", plain["ready"], "--agent", f"script:{plan}", "--json",
                       expect=(2,))
    line = error_line(result.stderr)
    assert str(plan) in line
    assert problem in line
    assert result.stdout == ""
    assert bench.run_count() == 0
    assert bench.query("SELECT status FROM task WHERE task_id = ?", plain["ready"]) == [
        ("READY_FOR_RUN",)]


def test_task_submit_with_run_creates_the_task_and_runs_it_at_once(
        plain: dict[str, Any]) -> None:
    bench = plain["bench"]
    result = bench.run_agentctl(
        "task", "submit", "--repo", str(plain["repo"]), "--type", "bug_fix", "--instruction",
        "run me now", "--run", "--agent", "noop", "--json", home=bench.home, cwd=bench.cwd)
    assert result.returncode == 1, result.stderr  # noop: FAILED_AGENT_COULD_NOT_COMPLETE
    run = result.json()
    assert run["number"] == 1 and run["verdict"]["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    task = bench.json("task", "show", run["taskId"])
    assert task["instruction"] == "run me now"


# --- cancellation from another shell ----------------------------------------------------------

def sleepers_in(folder: Path) -> set[int]:
    """Pids of `sleep 30` processes working below `folder`, from /proc (no psutil)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if argv[:2] in ([b"sleep", b"30"], [b"/usr/bin/sleep", b"30"]) and \
                cwd.is_relative_to(folder):
            found.add(int(entry.name))
    return found


def test_a_run_cancelled_from_another_shell_ends_cancelled_with_a_verdict(
        agentctl, repo: Path, home: Path, tmp_path: Path, agentctl_executable: str) -> None:  # type: ignore[no-untyped-def]
    cwd = tmp_path / "cwd"
    plan = cwd / "sleep.toml"
    plan.write_text('[[step]]\ntool = "shell.run"\ncommand = "sleep 30"\ntimeout = 60\n')
    task = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                    "--instruction", "wait", "--json").json()["taskId"]
    environment = {**os.environ, "AGENTCTL_HOME": str(home)}
    environment.pop("AGENTCTL_CONFIG", None)
    started = subprocess.Popen([agentctl_executable, "run", "start", task, "--agent",
                                f"script:{plan}", "--json"], cwd=cwd, env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        run_id, sleeping = None, set()
        while time.monotonic() < deadline and not sleeping:
            listed = agentctl("run", "list", "--json").json()
            if listed and listed[0]["status"] == "RUNNING_AGENT":
                run_id = listed[0]["runId"]
                tree = agentctl("run", "show", run_id, "--tree", "--json").json()
                workspace = Path(tree["attempts"][0]["steps"][0]["attributes"]["path"])
                sleeping = sleepers_in(workspace)
            time.sleep(0.1)
        assert run_id and sleeping, "the run never reached RUNNING_AGENT with its sleep started"
        cancelled = agentctl("run", "cancel", run_id)
        assert cancelled.returncode == 0, cancelled.stderr
        stdout, stderr = started.communicate(timeout=120)  # a hang guard, not a deadline
    finally:
        if started.poll() is None:
            started.kill()
            started.communicate()
    assert started.returncode == 1, stderr
    assert json.loads(stdout)["verdict"]["status"] == "CANCELLED"
    shown = agentctl("run", "show", run_id, "--tree", "--json").json()
    assert shown["status"] == "CANCELLED"
    assert shown["verdict"]["status"] == "CANCELLED"
    assert shown["verdict"]["prEligibility"] == "NOT_ELIGIBLE"
    (attempt,) = shown["attempts"]
    assert attempt["status"] == "CANCELLED" and attempt["endedAt"]
    sleep = next(s for s in attempt["steps"] if s["toolCall"])
    assert sleep["toolCall"]["result"]["error"] == "cancelled"
    assert sleepers_in(workspace) == set()
    assert not any(Path(f"/proc/{pid}").exists() for pid in sleeping)
    events = [e["type"] for e in agentctl("events", "--run", run_id, "--json").json()]
    assert "RunCancelled" in events and events[-1] == "RunCompleted"

