"""The seed's four scenarios and its verdict rules, end to end on one throw-away repository.

The module builds one home and plays every scenario once (a dozen runs, a few at a time); each
test then reads what one run left behind: its verdict, tree, artifacts and events. The last tests
look at the store as a whole: every ended run has exactly one verdict (all seven kinds occur),
every artifact verifies, the audit log verifies, and a corrupted artifact is caught.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench, diff_of, in_parallel, step_of, steps

STRICT = """\
[policy]
max_autonomy = "auto_pr"

[budget]
max_attempts = 2
backoff_initial_seconds = 0
"""
LENIENT = STRICT + "\n[judge]\nstrict = false\n"
SETTINGS = "calc/config/settings.py"
WORKFLOW = ".github/workflows/deploy.yml"
INFRA_MESSAGE = ("Could not transfer artifact com.acme:rocket:pom:1.0 from/to central "
                 "(https://repo.example.com/maven2): repository timeout")
INFRA_VERIFY = f"echo '{INFRA_MESSAGE}' >&2; exit 1"
AUTONOMY = ("dry_run", "draft_pr", "supervised_pr", "auto_pr")


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_git, run_agentctl
         ) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("seed")
    repo = repo_maker(root / "calc", CALC_FILES)
    bench = Bench(root, run_agentctl)
    bench.config(STRICT)
    lenient = {"AGENTCTL_CONFIG": str(bench.config(LENIENT, "lenient.toml"))}
    verify = ("--verify", UNITTEST)

    settings = bench.plan("settings.toml", {"tool": "fs.replace", "path": SETTINGS,
                                             "old": "30", "new": "60"})
    docstring = bench.plan("docstring.toml", {
        "tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
        "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"})
    breaking = bench.plan("breaking.toml", {"tool": "fs.replace", "path": "calc/__init__.py",
                                             "old": "a + b", "new": "a - b"})
    sneaky = bench.plan("sneaky.toml", {
        "tool": "shell.run",
        "command": f"python3 -c \"open('{WORKFLOW}', 'a').write('  workflow_dispatch: {{}}\\n')\""})

    def touch_workflow(clone: Path) -> None:
        with (clone / WORKFLOW).open("a") as handle:
            handle.write("  workflow_dispatch: {}\n")
        with (clone / "calc/__init__.py").open("a") as handle:
            handle.write("\n\ndef sub(a, b):\n    return a - b\n")

    diff = bench.cwd / "workflow.diff"
    diff.write_text(diff_of(repo, root / "scratch", touch_workflow, run_git))

    scenarios: dict[str, tuple[tuple[str, ...], str, dict[str, str] | None]] = {
        **{f"warn-{level}": (("--autonomy", level, *verify), f"script:{settings}", None)
           for level in AUTONOMY},
        "warn-lenient": (("--autonomy", "auto_pr", *verify), f"script:{settings}", lenient),
        "clean-auto": (("--autonomy", "auto_pr", *verify), f"script:{docstring}", None),
        "policy-patch": (("--autonomy", "auto_pr", *verify), f"patch:{diff}", None),
        "policy-shell": (("--autonomy", "auto_pr", *verify), f"script:{sneaky}", None),
        "infra": (("--autonomy", "auto_pr", "--verify", INFRA_VERIFY), f"script:{docstring}",
                  None),
        "assertion": (("--autonomy", "auto_pr", *verify), f"script:{breaking}", None),
        "noop": ((), "noop", None),
        "cancelled": ((), "noop", None),
    }

    def play(name: str) -> dict[str, Any]:
        flags, agent, env = scenarios[name]
        task = bench.submit(repo, *flags, env=env)
        if name != "cancelled":
            return bench.start(task, agent, env=env)
        queued = bench.json("run", "start", task, "--agent", agent, "--detach")
        bench.cli("run", "cancel", queued["runId"])
        return dict(bench.json("run", "show", queued["runId"]))

    runs = dict(zip(scenarios, in_parallel(play, scenarios), strict=True))
    return {"bench": bench, "repo": repo, "runs": runs, "trees": {}}


def verdict_of(seed: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(seed["runs"][name]["verdict"])


def tree_of(seed: dict[str, Any], name: str) -> dict[str, Any]:
    """The run's tree, read once per module (tests only read it)."""
    if name not in seed["trees"]:
        seed["trees"][name] = seed["bench"].tree(seed["runs"][name]["runId"])
    return dict(seed["trees"][name])


# --- scenario 1: tests pass, the judge warns about a production config module ----------------

@pytest.mark.parametrize(("level", "eligibility", "status"), [
    ("dry_run", "NOT_ELIGIBLE", "COMPLETED"),
    ("draft_pr", "DRAFT_ONLY", "COMPLETED"),
    ("supervised_pr", "ELIGIBLE_AFTER_HUMAN_APPROVAL", "NEEDS_APPROVAL"),
    ("auto_pr", "ELIGIBLE_AFTER_HUMAN_APPROVAL", "NEEDS_APPROVAL"),
])
def test_a_config_change_with_passing_tests_needs_review_at_every_autonomy_level(
        seed: dict[str, Any], level: str, eligibility: str, status: str) -> None:
    run = seed["runs"][f"warn-{level}"]
    assert run["exitCode"] == 0
    assert run["verdict"]["status"] == "SUCCESS_NEEDS_REVIEW"
    assert run["verdict"]["prEligibility"] == eligibility
    assert run["status"] == status
    assert any(SETTINGS in reason for reason in run["verdict"]["reasons"])


def test_judge_warning_changes_eligibility_to_needs_review_under_a_strict_judge(
        seed: dict[str, Any]) -> None:
    strict, lenient = verdict_of(seed, "warn-auto_pr"), verdict_of(seed, "warn-lenient")
    assert (strict["status"], strict["prEligibility"]) == (
        "SUCCESS_NEEDS_REVIEW", "ELIGIBLE_AFTER_HUMAN_APPROVAL")
    assert (lenient["status"], lenient["prEligibility"]) == ("SUCCESS", "ELIGIBLE_FOR_AUTO_PR")
    judge = step_of(tree_of(seed, "warn-auto_pr"), "JUDGE_DIFF")
    assert judge["attributes"]["status"] == "PASSED_WITH_WARNINGS"


def test_a_clean_change_with_passing_tests_is_eligible_for_auto_pr(seed: dict[str, Any]) -> None:
    run = seed["runs"]["clean-auto"]
    assert run["exitCode"] == 0
    assert (run["verdict"]["status"], run["verdict"]["prEligibility"]) == (
        "SUCCESS", "ELIGIBLE_FOR_AUTO_PR")
    assert run["status"] == "COMPLETED"


def test_the_needs_review_verdict_cites_the_patch_the_verifier_and_the_judge(
        seed: dict[str, Any]) -> None:
    bench = seed["bench"]
    verdict = bench.json("verdict", "show", seed["runs"]["warn-supervised_pr"]["runId"])
    names = {artifact["name"] for artifact in verdict["evidence"]}
    assert {"patch.diff", "verifier-report.json", "judge-report.json"} <= names
    judge = next(a for a in verdict["evidence"] if a["name"] == "judge-report.json")
    report = json.loads(bench.artifact_text(judge["artifactId"]))
    assert SETTINGS in json.dumps(report)


# --- scenario 2: the patch touches a forbidden workflow file ----------------------------------

def test_patch_touching_forbidden_path_produces_failed_policy(seed: dict[str, Any]) -> None:
    run = seed["runs"]["policy-patch"]
    assert run["exitCode"] == 1
    assert (run["verdict"]["status"], run["verdict"]["prEligibility"]) == (
        "FAILED_POLICY", "NOT_ELIGIBLE")
    assert any(WORKFLOW in reason for reason in run["verdict"]["reasons"])
    assert run["status"] == "FAILED"


def test_a_forbidden_patch_fails_policy_even_though_its_tests_pass(seed: dict[str, Any]) -> None:
    tree = tree_of(seed, "policy-patch")
    applied, verified_on = [s for s in steps(tree) if s["type"] == "APPLY_PATCH"]
    assert applied["title"].startswith("apply ") and applied["status"] == "SUCCEEDED"
    assert verified_on["title"].startswith("apply the patch to a fresh checkout")
    assert step_of(tree, "COLLECT_ARTIFACTS")["attributes"]["boundaryPassed"] is False
    (verifier,) = [s for s in steps(tree) if s["type"] == "RUN_VERIFIER"
                   and not s["title"].startswith("baseline")]  # the base is compared too
    assert verifier["attributes"]["status"] == "PASSED"


def test_an_allowed_command_that_writes_a_forbidden_file_is_caught_by_the_boundary_check(
        seed: dict[str, Any]) -> None:
    run = seed["runs"]["policy-shell"]
    (call,) = [s["toolCall"] for s in steps(tree_of(seed, "policy-shell")) if s["toolCall"]]
    assert (call["toolName"], call["decision"]) == ("shell.run", "ALLOWED")
    assert call["result"]["exitCode"] == 0
    assert (run["verdict"]["status"], run["verdict"]["prEligibility"]) == (
        "FAILED_POLICY", "NOT_ELIGIBLE")
    assert any(WORKFLOW in reason for reason in run["verdict"]["reasons"])


# --- scenario 3: the verifier cannot reach its dependency repository ---------------------------

def test_a_repository_timeout_in_the_verifier_is_failed_infrastructure(
        seed: dict[str, Any]) -> None:
    run = seed["runs"]["infra"]
    assert run["exitCode"] == 1
    assert (run["verdict"]["status"], run["verdict"]["prEligibility"]) == (
        "FAILED_INFRASTRUCTURE", "NOT_ELIGIBLE")
    assert any("repository timeout" in reason for reason in run["verdict"]["reasons"])


def test_an_infrastructure_failure_is_retried_in_a_fresh_attempt_and_both_are_in_the_tree(
        seed: dict[str, Any]) -> None:
    tree = tree_of(seed, "infra")
    attempts = tree["attempts"]
    assert [a["attemptNumber"] for a in attempts] == [1, 2]
    assert attempts[0]["status"] == "FAILED"
    assert attempts[0]["failureCode"] and attempts[0]["endedAt"]
    # The last attempt hit the same timeout: it ended, and says so, rather than "completed".
    assert attempts[1]["status"] == "FAILED"
    assert attempts[1]["failureCode"] == attempts[0]["failureCode"]
    assert attempts[0]["leaseId"] != attempts[1]["leaseId"]
    workspaces = {s["attributes"]["path"] for number in (0, 1) for s in steps(tree, number)
                  if s["type"] == "PREPARE_WORKSPACE"}
    assert len(workspaces) == 2
    for number in (0, 1):
        (verifier,) = [s for s in steps(tree, number) if s["type"] == "RUN_VERIFIER"
                       and not s["title"].startswith("baseline")]
        assert verifier["attributes"]["status"] == "INFRA_FAILURE"
    types = [e["type"] for e in seed["bench"].events(tree["runId"])]
    assert types.count("LeaseAcquired") == 2 and types.count("AttemptFailed") == 2
    assert types.count("RunQueued") == 2  # created, then again after attempt 1
    assert types.count("VerdictDecided") == 1 and types[-1] == "RunCompleted"


def test_the_verifier_report_of_an_infrastructure_failure_cites_the_timeout(
        seed: dict[str, Any]) -> None:
    bench = seed["bench"]
    (report,) = [a for a in bench.artifacts(seed["runs"]["infra"]["runId"])
                 if a["name"] == "verifier-report.json" and
                 a["attemptId"] == tree_of(seed, "infra")["attempts"][-1]["attemptId"]]
    content = json.loads(bench.artifact_text(report["artifactId"]))
    assert content["status"] == "INFRA_FAILURE"
    assert "repository timeout" in json.dumps(content)


def test_the_verdict_of_a_retried_run_cites_only_its_last_attempts_evidence(
        seed: dict[str, Any]) -> None:
    last = tree_of(seed, "infra")["attempts"][-1]["attemptId"]
    verdict = seed["bench"].json("verdict", "show", seed["runs"]["infra"]["runId"])
    assert "verifier-report.json" in {a["name"] for a in verdict["evidence"]}
    assert {a["attemptId"] for a in verdict["evidence"]} == {last}


def test_verdict_show_prints_a_reason_verbatim_even_when_it_looks_like_an_emoji_code(
        seed: dict[str, Any]) -> None:
    shown = seed["bench"].cli("verdict", "show", seed["runs"]["infra"]["runId"]).stdout
    assert "com.acme:rocket:pom:1.0" in shown


# --- scenario 4: a unit test fails on an assertion --------------------------------------------

def test_a_failing_assertion_is_failed_verification_naming_the_test(seed: dict[str, Any]) -> None:
    run = seed["runs"]["assertion"]
    assert run["exitCode"] == 1
    assert (run["verdict"]["status"], run["verdict"]["prEligibility"]) == (
        "FAILED_VERIFICATION", "NOT_ELIGIBLE")
    assert any("test_adds_two_numbers" in reason for reason in run["verdict"]["reasons"])
    # the patch's check; its reruns and the baseline on the base are steps of their own
    (verifier,) = [s for s in steps(tree_of(seed, "assertion")) if s["type"] == "RUN_VERIFIER"
                   and not s["attributes"].get("baseline") and not s["attributes"].get("rerun")]
    assert verifier["attributes"]["status"] == "FAILED"
    assert "test_adds_two_numbers" in verifier["attributes"]["summary"]
    assert "test_adding_zero_changes_nothing" not in verifier["attributes"]["summary"]


def test_required_verifier_failure_blocks_auto_pr(seed: dict[str, Any]) -> None:
    run = seed["runs"]["assertion"]
    assert run["executionSpec"]["autonomyLevel"] == "auto_pr"
    assert run["verdict"]["prEligibility"] == "NOT_ELIGIBLE"
    assert len(tree_of(seed, "assertion")["attempts"]) == 1  # a code failure is not retried


# --- an agent that changes nothing ----------------------------------------------------------

def test_a_run_whose_agent_changes_nothing_could_not_complete(seed: dict[str, Any]) -> None:
    run = seed["runs"]["noop"]
    assert run["exitCode"] == 1
    assert (run["verdict"]["status"], run["verdict"]["prEligibility"]) == (
        "FAILED_AGENT_COULD_NOT_COMPLETE", "NOT_ELIGIBLE")
    assert run["status"] == "FAILED"
    assert any("no patch" in reason for reason in run["verdict"]["reasons"])



# --- a run nobody worked on yet, cancelled -----------------------------------------------------

def test_a_queued_run_cancelled_before_any_worker_took_it_ends_cancelled_with_a_verdict(
        seed: dict[str, Any], error_line) -> None:  # type: ignore[no-untyped-def]
    run = seed["runs"]["cancelled"]
    assert run["status"] == "CANCELLED" and run["completedAt"]
    assert (run["verdict"]["status"], run["verdict"]["prEligibility"]) == (
        "CANCELLED", "NOT_ELIGIBLE")
    again = seed["bench"].cli("run", "cancel", run["runId"], expect=(2,))
    assert "CANCELLED" in error_line(again.stderr)


# --- the store as a whole ---------------------------------------------------------------------

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "EXPIRED", "NEEDS_APPROVAL"}


def test_run_cannot_complete_without_a_verdict(seed: dict[str, Any]) -> None:
    bench = seed["bench"]
    listed = bench.json("run", "list")
    assert len(listed) == len(seed["runs"])
    assert {run["status"] for run in listed} <= TERMINAL
    assert {run["verdict"]["status"] for run in listed} == {
        "SUCCESS", "SUCCESS_NEEDS_REVIEW", "FAILED_AGENT_COULD_NOT_COMPLETE",
        "FAILED_VERIFICATION", "FAILED_POLICY", "FAILED_INFRASTRUCTURE", "CANCELLED"}
    assert all(run["verdict"] and run["verdict"]["verdictId"] for run in listed)
    verdicts = dict(bench.query("SELECT run_id, count(*) FROM verdict GROUP BY run_id"))
    assert verdicts == {run["runId"]: 1 for run in listed}


def test_every_run_of_every_scenario_passes_artifact_verify(seed: dict[str, Any]) -> None:
    bench = seed["bench"]
    results = [bench.cli("artifact", "verify", run["runId"], expect=None)
               for run in seed["runs"].values()]
    assert [r.returncode for r in results] == [0] * len(seed["runs"]), [r.stderr for r in results]
    assert all(r.stdout.startswith("ok: ") for r in results)


def test_the_audit_log_verifies_after_every_scenario(seed: dict[str, Any]) -> None:
    assert seed["bench"].cli("audit", "verify").returncode == 0


def test_corrupting_an_artifact_file_makes_artifact_verify_exit_3(
        seed: dict[str, Any], copy_home) -> None:  # type: ignore[no-untyped-def]
    bench = seed["bench"]
    run_id = seed["runs"]["clean-auto"]["runId"]
    patch = next(a for a in bench.artifacts(run_id) if a["name"] == "patch.diff")
    home = copy_home(bench.home)
    blob = home / patch["uri"]
    blob.chmod(0o644)
    blob.write_text(blob.read_text() + "+sneaked in\n")
    result = bench.run_agentctl("artifact", "verify", run_id, home=home, cwd=bench.cwd)
    assert result.returncode == 3, result.stderr
    assert patch["artifactId"] in result.stdout + result.stderr
    blob.unlink()
    missing = bench.run_agentctl("artifact", "verify", run_id, home=home, cwd=bench.cwd)
    assert missing.returncode == 3, missing.stderr
    shutil.rmtree(home)
