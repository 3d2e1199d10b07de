"""A supervised run waits for a person: approval, rejection, and `pr create` on real repositories.

Each scenario has its own repository, so what one does to its refs cannot disturb another; the
module fixture plays them all (a few at a time) and the tests read what they left behind.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.people_support import (
    API_KEY,
    API_KEY_ENV,
    GITHUB_TOKEN,
    cli_result,
    make_user_checkout_busy,
    stored_text,
    submit_and_run,
    tree_of_patch,
    without_branch,
)
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench, diff_of, in_parallel, repo_snapshot

# The verifier prints a marker, a GitHub token and the passthrough API key; its log is evidence
# for the requester, never for a PR body. The secrets are assembled at run time.
LEAK = (
    "import os\n\n"
    "print('VERIFIER-LOG-MARKER all checks fine')\n"
    "print('token=' + 'ghp_' + 'a' * 36)\n"
    "print('calling the API with ' + os.environ.get('MY_API_KEY', 'no key'))\n"
)
FILES = {**CALC_FILES, "leak.py": LEAK, "docs/old-notes.md": "# old notes\n",
         "calc/legacy.py": "LEGACY = True\n"}
PLAN = [
    {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
     "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"},
    {"tool": "fs.write", "path": "calc/mul.py", "content": "def mul(a, b):\n    return a * b\n"},
    {"tool": "fs.delete", "path": "docs/old-notes.md"},
    {"tool": "fs.rename", "path": "calc/legacy.py", "to": "calc/compat.py"},
]
INSTRUCTION = "document add, add mul, drop the old notes, rename legacy to compat"
CONFIG = '[env]\npassthrough = ["MY_API_KEY"]\n'
VERIFY = ("--verify", UNITTEST, "--verify", "python3 leak.py")
# The brief's verifier: the token is spelled in the command itself, inside double quotes.
QUOTED_ECHO = f'echo "token={GITHUB_TOKEN}"'


class Scenarios:
    """One home, one plan, a repository per scenario."""

    def __init__(self, root: Path, run_agentctl: Callable[..., Any],
                 repo_maker: Callable[..., Path], git: Callable[..., str]) -> None:
        self.root, self.git, self.repo_maker = root, git, repo_maker
        self.bench = Bench(root, run_agentctl)
        self.bench.config(CONFIG)
        self.plan = self.bench.plan("change.toml", *PLAN)

    def repo(self, name: str) -> Path:
        return self.repo_maker(self.root / "repos" / name, FILES)

    def run(self, repo: Path, *flags: str, agent: str | None = None,
            verify: tuple[str, ...] = VERIFY, autonomy: str = "supervised_pr") -> dict[str, Any]:
        return submit_and_run(self.bench, repo, "--autonomy", autonomy, *verify, *flags,
                              agent=agent or f"script:{self.plan}", instruction=INSTRUCTION,
                              env=API_KEY_ENV)

    def bare(self, name: str) -> Path:
        path = self.root / "remotes" / f"{name}.git"
        subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
        return path

    def approve(self, run_id: str, by: str = "alice") -> dict[str, Any]:
        return cli_result(self.bench, "verdict", "approve", run_id, "--by", by,
                          "--reason", "read the diff and the test results")

    def reject(self, run_id: str, by: str = "bob") -> dict[str, Any]:
        return cli_result(self.bench, "verdict", "reject", run_id, "--by", by,
                          "--reason", "wrong approach, fix the caller instead")

    def pr(self, run_id: str, *flags: str) -> dict[str, Any]:
        return cli_result(self.bench, "pr", "create", run_id, *flags, "--json")

    def show(self, run_id: str) -> dict[str, Any]:
        return dict(self.bench.json("run", "show", run_id))

    def branches(self, repo: Path) -> list[str]:
        return self.git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()

    # --- the scenarios ----------------------------------------------------------------------
    def approved(self) -> dict[str, Any]:
        """Approve; from a checkout that is mid-work, try `--branch main`, then `pr create
        --remote` with the default branch name."""
        repo, remote = self.repo("approved"), self.bare("approved")
        run = self.run(repo)
        run_id = run["runId"]
        approval = self.approve(run_id)
        make_user_checkout_busy(repo, self.git)
        before_clash = repo_snapshot(repo, self.git)
        clash = self.pr(run_id, "--branch", "main")
        before = repo_snapshot(repo, self.git)
        pr = self.pr(run_id, "--remote", str(remote))
        after = repo_snapshot(repo, self.git)
        assert pr["exitCode"] == 0, pr["stderr"]  # everything below reads the branch it made
        created = json.loads(pr["stdout"])
        branch = created["branch"]
        artifacts = self.bench.artifacts(run_id)
        patch = stored_text(self.bench, artifacts, "patch.diff")
        return {
            "repo": repo, "remote": remote, "run": run, "approval": approval, "pr": pr,
            "created": created, "body": self.bench.artifact_text(created["bodyArtifact"]),
            "patch": patch, "explain": self.bench.explain(run_id), "show": self.show(run_id),
            "events": self.bench.events(run_id), "artifacts": artifacts,
            "clash": clash, "beforeClash": before_clash, "before": before, "after": after,
            "parents": self.git(repo, "rev-list", "--parents", "-n", "1", branch).split()[1:],
            "branchTree": self.git(repo, "rev-parse", f"{branch}^{{tree}}"),
            "expectedTree": tree_of_patch(repo, run["baseCommit"], patch,
                                          self.root / "scratch-approved", self.git),
            "branchDiff": self.git(repo, "diff", "--binary", "--full-index", "--find-renames",
                                   run["baseCommit"], branch) + "\n",
            "commitMessage": self.git(repo, "show", "-s", "--format=%B", branch),
            "remoteRef": self.git(remote, "rev-parse", f"refs/heads/{branch}"),
        }

    def rejected(self) -> dict[str, Any]:
        repo = self.repo("rejected")
        run = self.run(repo)
        run_id = run["runId"]
        rejection = self.reject(run_id)
        pr = self.pr(run_id)
        approval = self.approve(run_id, by="carol")
        return {"repo": repo, "run": run, "rejection": rejection, "pr": pr,
                "lateApproval": approval, "branches": self.branches(repo),
                "show": self.show(run_id), "explain": self.bench.explain(run_id),
                "events": self.bench.events(run_id)}

    def waiting_then_failed_push(self) -> dict[str, Any]:
        """`pr create` before approval, then a push to a remote that is not there, then again."""
        repo, remote = self.repo("push"), self.bare("push")
        run = self.run(repo)
        run_id = run["runId"]
        early = self.pr(run_id)
        status_after_early = self.show(run_id)["status"]
        branches_after_early = self.branches(repo)
        self.approve(run_id)
        before_push = repo_snapshot(repo, self.git)
        failed = self.pr(run_id, "--remote", str(self.root / "remotes" / "missing.git"))
        after_push = repo_snapshot(repo, self.git)
        retry = self.pr(run_id, "--remote", str(remote))
        return {"repo": repo, "run": run, "early": early, "statusAfterEarly": status_after_early,
                "branchesAfterEarly": branches_after_early, "failed": failed,
                "beforePush": before_push, "afterPush": after_push, "retry": retry,
                "remoteBranches": self.branches(remote), "show": self.show(run_id)}

    def forbidden(self) -> dict[str, Any]:
        repo = self.repo("forbidden")

        def touch_workflow(clone: Path) -> None:
            (clone / ".github/workflows/deploy.yml").write_text("name: deploy\non: [push]\n")
            (clone / "calc/__init__.py").write_text(FILES["calc/__init__.py"] + "# tidy\n")

        diff = self.root / "forbidden.diff"
        diff.write_text(diff_of(repo, self.root / "scratch-forbidden", touch_workflow, self.git))
        run = self.run(repo, agent=f"patch:{diff}")
        run_id = run["runId"]
        approval = self.approve(run_id)
        pr = self.pr(run_id)
        return {"repo": repo, "run": run, "approval": approval, "pr": pr,
                "verdictAfter": self.bench.json("verdict", "show", run_id),
                "branches": self.branches(repo)}

    def draft(self) -> dict[str, Any]:
        repo = self.repo("draft")
        run = self.run(repo, autonomy="draft_pr")
        pr = self.pr(run["runId"])
        return {"repo": repo, "run": run, "pr": pr, "show": self.show(run["runId"]),
                "events": self.bench.events(run["runId"])}

    def quoted_secret(self) -> dict[str, Any]:
        """The brief's own example: the verifier command spells the token in double quotes."""
        repo = self.repo("quoted")
        refused = self.bench.cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                                 "--instruction", "check the token", "--verify", QUOTED_ECHO,
                                 expect=(2,))
        return {"repo": repo, "refused": refused,
                "tasks": self.bench.json("task", "list")}

    def secret_in_patch(self) -> dict[str, Any]:
        """The agent writes a token into a source file; a person approves anyway."""
        repo, remote = self.repo("secret"), self.bare("secret")
        plan = self.bench.plan("creds.toml", {"tool": "fs.write", "path": "calc/creds.py",
                                              "content": f"TOKEN = '{GITHUB_TOKEN}'\n"})
        run = self.run(repo, agent=f"script:{plan}", verify=("--verify", UNITTEST))
        approval = self.approve(run["runId"])
        pr = self.pr(run["runId"], "--remote", str(remote))
        return {"repo": repo, "run": run, "approval": approval, "pr": pr,
                "branches": self.branches(repo), "remoteBranches": self.branches(remote)}


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_git, run_agentctl
           ) -> dict[str, Any]:
    scenarios = Scenarios(tmp_path_factory.mktemp("people-prs"), run_agentctl, repo_maker, run_git)
    names = ["approved", "waiting_then_failed_push", "rejected", "forbidden", "draft",
             "quoted_secret", "secret_in_patch"]
    results = in_parallel(lambda name: getattr(scenarios, name)(), names)
    played = dict(zip(names, results, strict=True))
    played["audit"] = cli_result(scenarios.bench, "audit", "verify")
    return played


def event_types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def same_decision(verdict: dict[str, Any], decided: dict[str, Any]) -> None:
    """`verdict` (from show or explain) is still the verdict the run decided."""
    for key in ("verdictId", "status", "prEligibility", "reasons"):
        assert verdict[key] == decided[key], key


# --- approval ---------------------------------------------------------------------------------

def test_a_successful_supervised_run_waits_for_approval(people: dict[str, Any]) -> None:
    for name in ("approved", "rejected", "waiting_then_failed_push"):
        run = people[name]["run"]
        assert run["exitCode"] == 0, name
        assert run["status"] == "NEEDS_APPROVAL", name
        assert run["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), name
        assert run["verdict"]["prEligibility"] == "ELIGIBLE_AFTER_HUMAN_APPROVAL", name


def test_approving_records_who_and_why_and_completes_the_run(people: dict[str, Any]) -> None:
    approved = people["approved"]
    assert approved["approval"]["exitCode"] == 0, approved["approval"]["stderr"]
    assert approved["show"]["status"] == "COMPLETED"
    [approval] = approved["explain"]["approvals"]
    assert (approval["decision"], approval["by"], approval["reason"]) == (
        "APPROVED", "alice", "read the diff and the test results")
    recorded = [e for e in approved["events"] if e["type"] == "ApprovalRecorded"]
    assert [(e["payload"]["decision"], e["payload"]["by"]) for e in recorded] == [
        ("APPROVED", "alice")]


def test_an_approval_leaves_the_verdict_and_its_reasons_as_they_were(
        people: dict[str, Any]) -> None:
    approved = people["approved"]
    same_decision(approved["explain"], approved["run"]["verdict"])
    assert approved["show"]["verdict"] == approved["run"]["verdict"]


def test_verdict_explain_ends_with_the_approval(people: dict[str, Any]) -> None:
    link = people["approved"]["explain"]["chain"][-1]
    assert link["check"] == "approvals"
    assert link["passed"] is True
    assert "alice" in link["detail"]


# --- pr create on an approved run -------------------------------------------------------------

def test_pr_create_names_the_default_branch_after_the_task_type_and_run_id(
        people: dict[str, Any]) -> None:
    approved = people["approved"]
    assert approved["pr"]["exitCode"] == 0, approved["pr"]["stderr"]
    run_id = approved["run"]["runId"]
    assert approved["created"]["branch"] == f"agentctl/refactor-{run_id[-8:].lower()}"
    assert approved["created"]["runId"] == run_id


def test_the_pr_branch_is_one_commit_on_the_base_commit(people: dict[str, Any]) -> None:
    approved = people["approved"]
    assert approved["parents"] == [approved["run"]["baseCommit"]]
    assert approved["created"]["baseCommit"] == approved["run"]["baseCommit"]


def test_the_pr_branch_holds_exactly_the_runs_patch(people: dict[str, Any]) -> None:
    approved = people["approved"]
    assert approved["branchTree"] == approved["expectedTree"]
    assert approved["branchDiff"] == approved["patch"]
    for change in ("calc/mul.py", "docs/old-notes.md", "calc/compat.py", "The sum of a and b"):
        assert change in approved["branchDiff"]


def test_pr_create_leaves_the_users_checkout_stash_and_branches_alone(
        people: dict[str, Any]) -> None:
    approved = people["approved"]
    before = approved["before"]
    assert before["stash"] and "staged.txt" in str(before["status"])  # the checkout was busy
    assert without_branch(approved["after"], approved["created"]["branch"]) == before


def test_pr_create_adds_only_its_branch_to_the_users_refs(people: dict[str, Any]) -> None:
    approved = people["approved"]
    branch = approved["created"]["branch"]
    new = set(str(approved["after"]["branches"]).splitlines()) - set(
        str(approved["before"]["branches"]).splitlines())
    assert new == {f"refs/heads/{branch} {approved['created']['commitSha']}"}


def test_pr_create_with_a_remote_pushes_the_branch_there(people: dict[str, Any]) -> None:
    approved = people["approved"]
    assert approved["remoteRef"] == approved["created"]["commitSha"]
    assert approved["created"]["remote"] == str(approved["remote"])


def test_run_show_lists_the_pull_request(people: dict[str, Any]) -> None:
    approved = people["approved"]
    [pull] = approved["show"]["pullRequests"]
    created = approved["created"]
    assert (pull["branch"], pull["commitSha"], pull["bodyArtifact"]) == (
        created["branch"], created["commitSha"], created["bodyArtifact"])


def test_run_show_prints_the_pull_requests_draft_flag_as_a_boolean(
        people: dict[str, Any]) -> None:
    [approved] = people["approved"]["show"]["pullRequests"]
    [draft] = people["draft"]["show"]["pullRequests"]
    assert approved["draft"] is False
    assert draft["draft"] is True


def test_pr_create_records_pr_requested_then_pr_created(people: dict[str, Any]) -> None:
    approved = people["approved"]
    assert event_types(approved["events"])[-2:] == ["PrRequested", "PrCreated"]
    created = approved["events"][-1]["payload"]
    assert created["branch"] == approved["created"]["branch"]
    assert created["commit"] == approved["created"]["commitSha"]
    assert created["bodyArtifact"] == approved["created"]["bodyArtifact"]


def test_the_event_log_still_verifies_after_approvals_rejections_and_prs(
        people: dict[str, Any]) -> None:
    assert people["audit"]["exitCode"] == 0, people["audit"]["stderr"]


def test_pr_create_onto_an_existing_branch_is_refused_and_changes_nothing(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    approved = people["approved"]
    clash = approved["clash"]
    assert clash["exitCode"] == 2
    assert "branch main already exists" in error_line(clash["stderr"])
    assert clash["stdout"] == ""
    assert approved["before"] == approved["beforeClash"]
    # Only the later, successful `pr create` left a PR, a body and a PrCreated event.
    assert [p["branch"] for p in approved["show"]["pullRequests"]] == [
        approved["created"]["branch"]]
    assert event_types(approved["events"]).count("PrCreated") == 1
    assert len([a for a in approved["artifacts"] if a["type"] == "PR_BODY_DRAFT"]) == 1


# --- pr-body.md -------------------------------------------------------------------------------

def test_the_pr_body_is_a_safe_for_pr_body_draft_artifact(people: dict[str, Any]) -> None:
    approved = people["approved"]
    [body] = [a for a in approved["artifacts"]
              if a["artifactId"] == approved["created"]["bodyArtifact"]]
    assert (body["name"], body["type"], body["visibility"]) == (
        "pr-body.md", "PR_BODY_DRAFT", "SAFE_FOR_PR")


def test_the_pr_body_names_the_intent_verdict_verification_and_run(
        people: dict[str, Any]) -> None:
    approved = people["approved"]
    body, verdict = approved["body"], approved["run"]["verdict"]
    assert INSTRUCTION in body
    assert verdict["status"] in body and verdict["prEligibility"] in body
    for reason in verdict["reasons"]:
        assert reason in body
    assert f"`{UNITTEST}`: PASSED" in body and "`python3 leak.py`: PASSED" in body
    assert approved["run"]["runId"] in body
    assert "calc/mul.py" in body and "calc/compat.py" in body
    assert "APPROVED by alice" in body


def test_the_pr_body_names_the_sha256_of_every_safe_evidence_artifact(
        people: dict[str, Any]) -> None:
    approved = people["approved"]
    safe = [a for a in approved["explain"]["evidence"] if a["visibility"] == "SAFE_FOR_PR"]
    assert {"patch.diff", "verifier-report.json", "judge-report.json"} <= {a["name"] for a in safe}
    for artifact in safe:
        assert artifact["sha256"] in approved["body"], artifact["name"]


def test_the_pr_body_holds_nothing_from_the_verifier_logs(people: dict[str, Any]) -> None:
    body = people["approved"]["body"]
    assert "VERIFIER-LOG-MARKER" not in body
    assert "calling the API" not in body


def test_secrets_the_verifier_printed_never_reach_the_pr_body(people: dict[str, Any]) -> None:
    body = people["approved"]["body"]
    assert GITHUB_TOKEN not in body
    assert API_KEY not in body


def test_the_pr_commit_message_names_the_run_and_no_secret(people: dict[str, Any]) -> None:
    message = people["approved"]["commitMessage"]
    assert people["approved"]["run"]["runId"] in message
    assert GITHUB_TOKEN not in message and API_KEY not in message


def test_a_token_spelled_in_a_verifier_command_is_refused_at_submission_without_echoing_it(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    quoted = people["quoted_secret"]
    line = error_line(quoted["refused"].stderr)
    assert "holds what looks like a secret" in line and "[env] passthrough" in line
    assert GITHUB_TOKEN not in quoted["refused"].stderr + quoted["refused"].stdout
    assert all(task["instruction"] != "check the token" for task in quoted["tasks"])


def test_a_patch_holding_a_secret_is_never_committed_or_pushed(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    secret = people["secret_in_patch"]
    assert any("secret" in reason for reason in secret["run"]["verdict"]["reasons"])
    assert secret["pr"]["exitCode"] == 2, secret["pr"]["stdout"]
    assert "secret" in error_line(secret["pr"]["stderr"])
    assert secret["branches"] == ["main"]
    assert secret["remoteBranches"] == []


# --- rejection --------------------------------------------------------------------------------

def test_rejecting_completes_the_run_and_records_the_rejection(people: dict[str, Any]) -> None:
    rejected = people["rejected"]
    assert rejected["rejection"]["exitCode"] == 0, rejected["rejection"]["stderr"]
    assert rejected["show"]["status"] == "COMPLETED"
    decisions = [(e["payload"]["decision"], e["payload"]["by"]) for e in rejected["events"]
                 if e["type"] == "ApprovalRecorded"]
    assert decisions == [("REJECTED", "bob")]
    link = rejected["explain"]["chain"][-1]
    assert (link["check"], link["passed"]) == ("approvals", False)
    same_decision(rejected["explain"], rejected["run"]["verdict"])


def test_pr_create_after_a_rejection_is_refused_naming_it(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    rejected = people["rejected"]
    assert rejected["pr"]["exitCode"] == 2
    line = error_line(rejected["pr"]["stderr"])
    assert "rejected by bob" in line and "wrong approach" in line
    assert rejected["pr"]["stdout"] == ""
    assert rejected["branches"] == ["main"]


def test_a_rejection_is_final_a_later_approval_is_refused(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    rejected = people["rejected"]
    assert rejected["lateApproval"]["exitCode"] == 2
    assert "rejected by bob" in error_line(rejected["lateApproval"]["stderr"])
    assert [a["decision"] for a in rejected["explain"]["approvals"]] == ["REJECTED"]


# --- refusals ---------------------------------------------------------------------------------

def test_pr_create_before_approval_is_refused_and_the_run_keeps_waiting(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    waiting = people["waiting_then_failed_push"]
    assert waiting["early"]["exitCode"] == 2
    line = error_line(waiting["early"]["stderr"])
    assert "approv" in line
    for reason in waiting["run"]["verdict"]["reasons"]:
        assert reason in line
    assert waiting["statusAfterEarly"] == "NEEDS_APPROVAL"
    assert waiting["branchesAfterEarly"] == ["main"]


def test_a_failed_policy_verdict_cannot_be_approved(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    forbidden = people["forbidden"]
    assert forbidden["run"]["verdict"]["status"] == "FAILED_POLICY"
    assert forbidden["run"]["exitCode"] == 1
    assert forbidden["approval"]["exitCode"] == 2
    line = error_line(forbidden["approval"]["stderr"])
    assert "FAILED_POLICY" in line and ".github/workflows/deploy.yml" in line


def test_pr_create_on_a_failed_policy_verdict_is_refused_with_its_reasons(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    forbidden = people["forbidden"]
    assert forbidden["pr"]["exitCode"] == 2
    line = error_line(forbidden["pr"]["stderr"])
    for reason in forbidden["run"]["verdict"]["reasons"]:
        assert reason in line
    assert forbidden["branches"] == ["main"]


def test_refused_approvals_change_neither_the_verdict_nor_its_reasons(
        people: dict[str, Any]) -> None:
    forbidden = people["forbidden"]
    same_decision(forbidden["verdictAfter"], forbidden["run"]["verdict"])
    assert any(".github/workflows/deploy.yml" in r for r in forbidden["verdictAfter"]["reasons"])
    assert forbidden["verdictAfter"]["approvals"] == []


# --- drafts and pushes ------------------------------------------------------------------------

def test_a_draft_only_verdict_opens_a_draft_without_being_asked(people: dict[str, Any]) -> None:
    draft = people["draft"]
    assert draft["run"]["verdict"]["prEligibility"] == "DRAFT_ONLY"
    assert draft["pr"]["exitCode"] == 0, draft["pr"]["stderr"]
    assert json.loads(draft["pr"]["stdout"])["draft"] is True
    [created] = [e for e in draft["events"] if e["type"] == "PrCreated"]
    assert created["payload"]["draft"] is True


def test_a_failed_push_leaves_no_branch_behind_and_can_be_retried(
        people: dict[str, Any], error_line: Callable[[str], str]) -> None:
    pushed = people["waiting_then_failed_push"]
    assert pushed["failed"]["exitCode"] != 0
    assert "missing.git" in error_line(pushed["failed"]["stderr"])
    assert pushed["afterPush"] == pushed["beforePush"]
    assert pushed["retry"]["exitCode"] == 0, pushed["retry"]["stderr"]
    branch = json.loads(pushed["retry"]["stdout"])["branch"]
    assert pushed["remoteBranches"] == [branch]


def test_a_failed_push_exits_1_and_records_no_pull_request(people: dict[str, Any]) -> None:
    pushed = people["waiting_then_failed_push"]
    assert pushed["failed"]["exitCode"] == 1
    assert pushed["failed"]["stdout"] == ""
    assert len(pushed["show"]["pullRequests"]) == (1 if pushed["retry"]["exitCode"] == 0 else 0)
