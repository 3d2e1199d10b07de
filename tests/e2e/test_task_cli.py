"""`agentctl task submit|list|show|cancel` on real throw-away repositories and a throw-away home.

They run the command line in-process (the `cli` fixture, tests/cli_runner.py): a task's records
need no process of their own; the concurrent first commands are processes, as they must be.
"""

from __future__ import annotations

import json
from pathlib import Path

TASK_KEYS = ("taskId status taskType autonomyLevel title instruction repository baseRef createdBy "
             "source sessionId labels createdAt").split()
SEED_INSTRUCTION = "Upgrade Jackson to 2.17.x and fix compile/test failures."


def submit(cli, repo: Path, *extra: str, **kw):  # type: ignore[no-untyped-def]
    result = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                 "--instruction", "Fix the greeting", *extra, "--json", **kw)
    assert result.returncode == 0, result.stderr
    return result.json()


def test_submit_list_show_cancel(cli, repo: Path, home: Path, error_line) -> None:
    submitted = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                    "--instruction", "Fix the greeting\nwhen the name is empty", "--json",
                    env={"AGENTCTL_USER": "alice"})
    assert submitted.returncode == 0, submitted.stderr
    task = submitted.json()
    assert set(TASK_KEYS) <= set(task)
    task_id = task["taskId"]
    assert task_id.startswith("task_") and len(task_id) == 31
    assert task["status"] == "READY_FOR_RUN"
    assert task["taskType"] == "bug_fix"
    assert task["autonomyLevel"] == "dry_run"
    assert task["title"] == "Fix the greeting"
    assert task["instruction"] == "Fix the greeting\nwhen the name is empty"
    assert task["repository"] == str(repo.resolve())
    assert task["baseRef"] == "main"
    assert task["createdBy"] == "alice"
    assert task["source"] == "cli"
    assert task["sessionId"] is None and task["labels"] == {}
    assert task["createdAt"].endswith("Z")
    assert f"next: agentctl run start {task_id}" in submitted.stderr

    listed = cli("task", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [t["taskId"] for t in listed.json()] == [task_id]
    assert listed.json()[0] == task

    table = cli("task", "list")
    assert table.returncode == 0
    shown_id = table.stdout.splitlines()[1].split()[0]  # a unique prefix; --full: the whole id
    assert task_id.startswith(shown_id) and "READY_FOR_RUN" in table.stdout
    assert task_id in cli("task", "list", "--full").stdout
    assert "Fix the greeting" in table.stdout

    shown = cli("task", "show", task_id[5:14], "--json")
    assert shown.returncode == 0, shown.stderr
    document = shown.json()
    assert document["runs"] == [] and document["pullRequest"] is None
    assert document["awaitingApproval"] is None
    assert {k: v for k, v in document.items()
            if k not in ("runs", "pullRequest", "awaitingApproval")} == task

    plain = cli("task", "show", task_id)
    assert plain.returncode == 0
    assert task_id in plain.stdout and str(repo.resolve()) in plain.stdout
    assert "when the name is empty" in plain.stdout

    cancelled = cli("task", "cancel", task_id[:14], "--reason", "not needed", "--json")
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.json()["status"] == "CANCELLED"
    assert cli("task", "show", task_id, "--json").json()["status"] == "CANCELLED"

    again = cli("task", "cancel", task_id)
    assert again.returncode == 2
    assert "CANCELLED to CANCELLED" in error_line(again.stderr)

    no_run = cli("run", "start", task_id)  # a cancelled task schedules no new run
    assert no_run.returncode == 2
    assert f"task {task_id} is CANCELLED: not needed; it cannot run" in error_line(no_run.stderr)

    events = cli("events", "--json").json()
    assert [e["type"] for e in events] == ["TaskSubmitted", "TaskAccepted", "TaskCancelled"]
    assert {e["taskId"] for e in events} == {task_id}
    assert events[2]["payload"]["reason"] == "not needed"


def test_flags_are_stored_on_the_task(cli, repo: Path) -> None:
    task = submit(cli, repo, "--type", "API_Migration", "--title", "Greeting fix",
                  "--allow", "./src/**",
                  "--allow", "tests/**", "--forbid", "src/config/**", "--verify", "pytest -q",
                  "--label", "team=payments", "--label", "ticket=PAY-1=x", "--autonomy",
                  "Draft_PR", "--base", "HEAD")
    assert task["taskType"] == "api_migration"  # as users type it, in any case
    assert task["title"] == "Greeting fix"
    assert task["allowedPaths"] == ["src/**", "tests/**"]
    assert task["forbiddenPaths"] == ["src/config/**"]
    assert task["verificationCommands"] == ["pytest -q"]
    assert task["labels"] == {"team": "payments", "ticket": "PAY-1=x"}
    assert task["autonomyLevel"] == "draft_pr"
    assert task["baseRef"] == "HEAD"


def test_relative_path_inside_the_repository_resolves_to_the_work_tree(cli,
                                                                        repo: Path) -> None:
    task = submit(cli, Path("../../src"), cwd=repo / "src" / "config")
    assert task["repository"] == str(repo.resolve())


def test_base_ref_defaults_to_the_current_branch_and_may_name_any_commit(
    cli, tmp_path: Path, repo_maker, run_git,
) -> None:
    repo = repo_maker(tmp_path / "dev", {"a.txt": "a\n"}, branch="develop")
    run_git(repo, "tag", "v1.0")
    assert submit(cli, repo)["baseRef"] == "develop"
    assert submit(cli, repo, "--base", "v1.0")["baseRef"] == "v1.0"


def test_detached_head_needs_an_explicit_base(cli, repo: Path, run_git, error_line) -> None:
    run_git(repo, "checkout", "-q", "--detach")
    result = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                 "--instruction", "x")
    assert result.returncode == 2
    assert "detached HEAD" in error_line(result.stderr)


def test_url_repository_is_stored_as_given_with_head_as_default_base(cli) -> None:
    url = "git@github.com:example/payments-service.git"
    result = cli("task", "submit", "--repo", url, "--type", "bug_fix", "--instruction", "x",
                 "--json")
    assert result.returncode == 0, result.stderr
    assert (result.json()["repository"], result.json()["baseRef"]) == (url, "HEAD")


def test_url_repository_keeps_an_explicit_base(cli) -> None:
    url = "https://github.com/example/payments-service.git"
    result = cli("task", "submit", "--repo", url, "--base", "release/2.x", "--type",
                 "bug_fix", "--instruction", "x", "--json")
    assert result.returncode == 0, result.stderr
    assert (result.json()["repository"], result.json()["baseRef"]) == (url, "release/2.x")


# --- --file ---------------------------------------------------------------------------------

def test_submit_file_with_the_seeds_request_json_as_is(cli, repo: Path,
                                                       tmp_path: Path) -> None:
    request = tmp_path / "task.json"
    request.write_text(json.dumps({
        "type": "dependency_upgrade",
        "repository": str(repo),
        "instruction": SEED_INSTRUCTION,
        "autonomyLevel": "supervised_pr",
    }, indent=2))
    result = cli("task", "submit", "--file", str(request), "--json")
    assert result.returncode == 0, result.stderr
    task = result.json()
    assert task["taskType"] == "dependency_upgrade"
    assert task["instruction"] == SEED_INSTRUCTION
    assert task["autonomyLevel"] == "supervised_pr"
    assert task["repository"] == str(repo.resolve())
    assert task["baseRef"] == "main"
    assert task["source"] == "file"
    assert task["status"] == "READY_FOR_RUN"


def test_submit_file_with_the_seeds_submit_task_request_shape(cli, repo: Path,
                                                              tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({
        "repository": str(repo), "baseRef": "main", "taskType": "dependency_upgrade",
        "instruction": SEED_INSTRUCTION, "allowedPaths": ["pom.xml", "src/**", "test/**"],
        "forbiddenPaths": ["infra/**", ".github/**"], "autonomyLevel": "draft_pr",
    }))
    result = cli("task", "submit", "--file", str(request), "--json")
    assert result.returncode == 0, result.stderr
    task = result.json()
    assert task["allowedPaths"] == ["pom.xml", "src/**", "test/**"]
    assert task["forbiddenPaths"] == ["infra/**", ".github/**"]
    assert (task["taskType"], task["autonomyLevel"], task["baseRef"]) == (
        "dependency_upgrade", "draft_pr", "main")


def test_submit_file_in_toml(cli, repo: Path, tmp_path: Path) -> None:
    request = tmp_path / "task.toml"
    request.write_text(f'''
repository = "{repo}"
base_ref = "main"
task_type = "refactor"
title = "Split the module"
instruction = """
Split src/app.py into smaller modules.
Keep the public API."""
allowed_paths = ["src/**"]
autonomy_level = "draft_pr"
verification_commands = ["pytest -q"]

[labels]
team = "payments"
''')
    result = cli("task", "submit", "--file", str(request), "--json")
    assert result.returncode == 0, result.stderr
    task = result.json()
    assert task["taskType"] == "refactor" and task["title"] == "Split the module"
    assert task["instruction"] == "Split src/app.py into smaller modules.\nKeep the public API."
    assert task["allowedPaths"] == ["src/**"] and task["labels"] == {"team": "payments"}
    assert task["verificationCommands"] == ["pytest -q"]
    assert task["source"] == "file"


def test_flags_override_the_file(cli, repo: Path, tmp_path: Path) -> None:
    request = tmp_path / "task.json"
    request.write_text(json.dumps({"type": "docs", "repository": "/does/not/exist",
                                   "instruction": "from the file", "allowedPaths": ["docs/**"]}))
    result = cli("task", "submit", "--file", str(request), "--repo", str(repo),
                 "--instruction", "from the flag", "--json")
    assert result.returncode == 0, result.stderr
    task = result.json()
    assert (task["instruction"], task["taskType"], task["allowedPaths"]) == (
        "from the flag", "docs", ["docs/**"])


def test_the_seeds_task_json_with_a_repository_alias_from_config(
    cli, repo: Path, tmp_path: Path,
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    (cwd / ".agentctl.toml").write_text(f'[repositories]\npayments-service = "{repo}"\n')
    request = cwd / "task.json"
    request.write_text(json.dumps({
        "taskId": "task_01J...", "createdBy": "user_123", "source": "cli",
        "taskType": "dependency_upgrade", "title": "Upgrade Jackson to 2.17.x in payments-service",
        "instruction": "Upgrade Jackson from 2.15.x to 2.17.x and fix compile/test failures.",
        "repository": "payments-service", "baseRef": "main", "autonomyLevel": "supervised_pr",
        "status": "accepted",
    }))
    result = cli("task", "submit", "--file", "task.json", "--json")
    assert result.returncode == 0, result.stderr
    task = result.json()
    assert task["repository"] == str(repo.resolve())
    assert task["createdBy"] == "user_123" and task["source"] == "cli"
    assert task["taskId"] != "task_01J..." and task["status"] == "READY_FOR_RUN"


# --- policy ---------------------------------------------------------------------------------

def test_autonomy_above_max_autonomy_is_stored_as_policy_denied_with_exit_2(
    cli, repo: Path, home: Path, error_line) -> None:
    result = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                 "--instruction", "x", "--autonomy", "auto_pr", "--json")
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert "denied by policy" in line
    assert "autonomy auto_pr exceeds max_autonomy supervised_pr" in line
    task = result.json()
    assert task["status"] == "POLICY_DENIED"
    assert task["statusReason"] == "autonomy auto_pr exceeds max_autonomy supervised_pr"
    assert task["taskId"] in line

    shown = cli("task", "show", task["taskId"])
    assert shown.returncode == 0
    assert "POLICY_DENIED" in shown.stdout and "exceeds max_autonomy" in shown.stdout
    no_run = cli("run", "start", task["taskId"])  # a denied task cannot create a run
    assert no_run.returncode == 2
    assert "is POLICY_DENIED: autonomy auto_pr exceeds" in error_line(no_run.stderr)
    events = cli("events", "--json").json()
    assert [e["type"] for e in events] == ["TaskSubmitted", "TaskPolicyDenied"]
    assert events[1]["payload"]["reason"] == task["statusReason"]


def test_requested_allowed_glob_that_config_forbids_is_denied(cli, repo: Path,
                                                              error_line) -> None:
    result = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                 "--instruction", "x", "--allow", "src/**", "--allow",
                 ".github/workflows/*.yml")
    assert result.returncode == 2
    assert "'.github/workflows/*.yml' is forbidden by config (.github/**)" in error_line(
        result.stderr)
    assert "POLICY_DENIED" in result.stdout


def test_policy_comes_from_the_config_found_upwards(cli, repo: Path, tmp_path: Path) -> None:
    project = tmp_path / "cwd" / "project"
    (project / "sub").mkdir(parents=True)
    (project / ".agentctl.toml").write_text(
        '[policy]\nmax_autonomy = "auto_pr"\ndefault_autonomy = "draft_pr"\n'
        f'repository_allowlist = ["{repo.parent}"]\n')
    task = submit(cli, repo, cwd=project / "sub")
    assert (task["status"], task["autonomyLevel"]) == ("READY_FOR_RUN", "draft_pr")
    assert submit(cli, repo, "--autonomy", "auto_pr", cwd=project / "sub")["status"] == \
        "READY_FOR_RUN"


def test_repository_outside_the_allowlist_is_denied(cli, repo: Path, tmp_path: Path,
                                                    error_line) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    (cwd / ".agentctl.toml").write_text(
        '[policy]\nrepository_allowlist = ["/srv/approved", "https://git.example.com/*"]\n')
    denied = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                 "--instruction", "x")
    assert denied.returncode == 2
    assert f"repository {repo.resolve()} is not in the repository allowlist" in error_line(
        denied.stderr)
    allowed = cli("task", "submit", "--repo", "https://git.example.com/payments.git",
                  "--type", "bug_fix", "--instruction", "x", "--json")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.json()["status"] == "READY_FOR_RUN"


# --- list -----------------------------------------------------------------------------------

def test_list_is_newest_first_and_filters(cli, repo: Path) -> None:
    ready = submit(cli, repo)["taskId"]
    denied = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                 "--instruction", "x", "--autonomy", "auto_pr", "--json").json()["taskId"]
    assert [t["taskId"] for t in cli("task", "list", "--json").json()] == [denied, ready]
    assert [t["taskId"] for t in cli("task", "list", "--limit", "1", "--json").json()] == [
        denied]
    assert [t["taskId"] for t in cli("task", "list", "--status", "ready_for_run",
                                     "--json").json()] == [ready]


def test_list_on_an_empty_home_says_so_and_creates_nothing(cli, home: Path, state_of) -> None:
    plain = cli("task", "list")
    assert plain.returncode == 0 and "no tasks yet" in plain.stdout
    as_json = cli("task", "list", "--json")
    assert as_json.returncode == 0 and as_json.json() == []
    assert state_of(home) is None


def test_concurrent_first_commands_on_a_fresh_home_all_succeed(repo: Path, home: Path,
                                                               tmp_path: Path) -> None:
    """Several processes creating the schema at once: one creates it, the others wait and use it."""
    import os
    import subprocess

    from tests.conftest import AGENTCTL

    env = {**os.environ, "AGENTCTL_HOME": str(home)}
    processes = [subprocess.Popen([AGENTCTL, "task", "submit", "--repo", str(repo), "--type",
                                   "custom", "--instruction", f"task {n}"], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for n in range(6)]
    errors = [p.communicate(timeout=120)[1] for p in processes]
    assert [p.returncode for p in processes] == [0] * 6, errors


def test_must_pass_tests_and_allow_removed_tests_are_stored_with_the_task_and_its_run(
        cli, repo: Path) -> None:
    task = submit(cli, repo, "--must-pass", "tests/test_greet.py::test_empty",
                  "--must-pass", "tests/test_greet.py::test_name", "--allow-removed-tests")
    assert task["mustPass"] == ["tests/test_greet.py::test_empty", "tests/test_greet.py::test_name"]
    assert task["allowRemovedTests"] is True
    shown = cli("task", "show", task["taskId"])
    assert "tests/test_greet.py::test_empty" in shown.stdout
    plain = submit(cli, repo)
    assert plain["mustPass"] == [] and plain["allowRemovedTests"] is False


def test_a_blank_must_pass_test_is_one_line_and_exit_2(cli, repo: Path, error_line) -> None:
    result = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                 "--instruction", "Fix it", "--must-pass", " ")
    assert result.returncode == 2
    assert error_line(result.stderr).startswith("agentctl: error: must-pass test ' ' must be one test id")
    assert cli("task", "list", "--json").json() == []
