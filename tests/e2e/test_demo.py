"""`agentctl demo`: the seed's four scenarios through the real pipeline, as a new user sees them."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]
EXPECTED = {
    "migration": ("SUCCESS_NEEDS_REVIEW", "ELIGIBLE_AFTER_HUMAN_APPROVAL"),
    "workflow edit": ("FAILED_POLICY", "NOT_ELIGIBLE"),
    "dependency upgrade": ("FAILED_INFRASTRUCTURE", "NOT_ELIGIBLE"),
    "refund rounding": ("FAILED_VERIFICATION", "NOT_ELIGIBLE"),
}
PLANS = {"migration": "migrate-flags.toml", "workflow edit": "migrate-flags-and-deploy.toml",
         "dependency upgrade": "upgrade-requests.toml", "refund rounding": "refund-rounding.toml"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One demo run; each scenario's run tree, by scenario name (read through the CLI)."""
    import json
    import os
    import subprocess

    from tests.conftest import AGENTCTL

    home = tmp_path_factory.mktemp("demo") / "home"
    temporary = tmp_path_factory.mktemp("demo-tmp")  # its TMPDIR: what it leaves there
    env = {**os.environ, "AGENTCTL_HOME": str(home), "TMPDIR": str(temporary)}

    def cli(*args: str) -> Result:
        done = subprocess.run([AGENTCTL, *args], capture_output=True, text=True, env=env,
                              timeout=120)
        return Result(done.returncode, done.stdout, done.stderr)

    shown = cli("demo", "--home", str(home))
    runs = {}
    for row in cli("run", "list", "--json").json():  # type: ignore[union-attr]
        task = cli("task", "show", row["taskId"], "--json").json()
        runs[task["labels"]["demo"]] = cli("run", "show", row["runId"], "--tree", "--json").json()
    return {"shown": shown, "runs": runs, "cli": cli, "home": home, "json": json,
            "temporary": temporary}


def test_the_demo_exits_cleanly_and_prints_the_table_and_the_next_commands(demo: dict) -> None:
    shown: Result = demo["shown"]
    assert shown.returncode == 0, shown.stderr
    for scenario in EXPECTED:
        assert scenario in shown.stdout
    assert re.search(r"^  agentctl run show --tree run_\w+$", shown.stdout, re.MULTILINE)
    assert re.search(r"^  agentctl verdict explain run_\w+$", shown.stdout, re.MULTILINE)
    assert "export AGENTCTL_HOME" not in shown.stdout  # this shell's AGENTCTL_HOME is the home


def test_a_demo_with_a_home_of_its_own_leaves_nothing_in_the_temporary_folder(
        demo: dict) -> None:
    """Its sample repository, plans and settings, and every attempt's folder, are gone: only
    the home named with --home keeps what the person explores."""
    assert demo["shown"].returncode == 0, demo["shown"].stderr
    assert sorted(p.name for p in demo["temporary"].iterdir()) == []


@pytest.mark.parametrize("scenario", EXPECTED)
def test_each_scenario_ends_with_the_seed_s_verdict_and_eligibility(demo: dict,
                                                                    scenario: str) -> None:
    verdict = demo["runs"][scenario]["verdict"]
    assert (verdict["status"], verdict["prEligibility"]) == EXPECTED[scenario]


def test_the_migration_needs_review_because_the_judge_saw_a_production_config_change(
        demo: dict) -> None:
    reasons = demo["runs"]["migration"]["verdict"]["reasons"]
    assert "production config module payments/config/production.py" in reasons[0]


def test_the_workflow_edit_is_failed_policy_naming_the_forbidden_path(demo: dict) -> None:
    reasons = demo["runs"]["workflow edit"]["verdict"]["reasons"]
    assert reasons == ["patch touches forbidden path .github/workflows/deploy.yml "
                       "(forbidden: .github/**)"]


def test_the_dependency_upgrade_failed_infrastructure_after_both_configured_attempts(
        demo: dict) -> None:
    attempts = demo["runs"]["dependency upgrade"]["attempts"]
    assert [a["status"] for a in attempts] == ["FAILED", "FAILED"]
    assert "repository timeout" in demo["runs"]["dependency upgrade"]["verdict"]["reasons"][0]


def test_the_broken_assertion_names_the_failing_test(demo: dict) -> None:
    reason = demo["runs"]["refund rounding"]["verdict"]["reasons"][0]
    assert "test_refund_subtracts_the_fee" in reason and "AssertionError" in reason


@pytest.mark.parametrize("scenario", EXPECTED)
def test_every_run_s_tree_has_the_tool_calls_its_plan_implies(demo: dict, scenario: str) -> None:
    plan = tomllib.loads(files("agentctl.resources").joinpath("demo", "plans",
                                                               PLANS[scenario]).read_text())
    expected_tools = [step["tool"] for step in plan["step"]]
    for attempt in demo["runs"][scenario]["attempts"]:
        calls = [s["toolCall"] for s in attempt["steps"] if s["type"] == "TOOL_CALL"]
        assert [c["toolName"] for c in calls] == expected_tools
        types = [s["type"] for s in attempt["steps"]]
        assert types[:3] == ["PREPARE_WORKSPACE", "CLONE_REPOSITORY", "LOAD_CONTEXT"]
        assert "COLLECT_ARTIFACTS" in types
        assert types[-1] == "FINALIZE"


def test_the_direct_workflow_write_is_denied_and_the_scripted_one_is_caught_by_the_boundary(
        demo: dict) -> None:
    steps = demo["runs"]["workflow edit"]["attempts"][0]["steps"]
    calls = [s["toolCall"] for s in steps if s["toolCall"]]
    direct = next(c for c in calls if ".github/workflows/deploy.yml" in c["argumentsJson"]
                  and c["toolName"] == "fs.replace")
    assert (direct["decision"], direct["matchedRule"]) == ("DENIED_BY_POLICY",
                                                           "forbidden: .github/**")
    scripted = next(c for c in calls if c["toolName"] == "shell.run")
    assert scripted["decision"] == "ALLOWED"


def test_every_demo_run_s_artifacts_verify_and_the_audit_log_is_intact(demo: dict) -> None:
    cli = demo["cli"]
    for run in demo["runs"].values():
        verified = cli("artifact", "verify", run["runId"])
        assert verified.returncode == 0, verified.stderr
    audited = cli("audit", "verify")
    assert audited.returncode == 0, audited.stderr


def test_with_keep_the_sample_repository_stays_for_a_pr_and_its_path_is_printed(
        agentctl: Cli, home: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"  # the kept sample lands in the test's own folder, not /tmp
    scratch.mkdir()
    shown = agentctl("demo", "--keep", env={"TMPDIR": str(scratch)})
    assert shown.returncode == 0, shown.stderr
    match = re.search(r"sample repository: (\S+)", shown.stdout)
    assert match, shown.stdout
    repository = Path(match.group(1))
    assert repository.is_relative_to(scratch)
    assert re.search(r"^  export AGENTCTL_HOME=\S+$", shown.stdout, re.MULTILINE)  # not $HOME's
    assert (repository / ".git").is_dir()
    assert (repository / "payments" / "refunds.py").is_file()


def test_the_refund_regression_is_pass_to_fail_because_the_test_passed_on_base(
        demo: dict) -> None:
    """unittest without -v names its passes through the injected hook: the broken test is known
    to have passed on the base, not "absent" there."""
    run = demo["runs"]["refund rounding"]
    reason = run["verdict"]["reasons"][0]
    assert "failed; it passed on base" in reason and "does not have it" not in reason
    explained = demo["cli"]("verdict", "explain", run["runId"], "--json").json()
    (check,) = explained["classification"]
    tests = {t["testId"]: (t["classification"], t["base"]) for t in check["classifiedTests"]}
    assert tests["tests.test_refunds.RefundsTest.test_refund_subtracts_the_fee"] == (
        "PASS_TO_FAIL", "PASSED")


def test_verdict_explain_lists_each_artifact_once_and_tells_the_reruns_apart(demo: dict) -> None:
    run = demo["runs"]["refund rounding"]
    shown = demo["cli"]("verdict", "explain", run["runId"], "--full")
    assert shown.returncode == 0, shown.stderr
    digests = re.findall(r"sha256 ([0-9a-f]{64})", shown.stdout)
    assert digests and len(digests) == len(set(digests))
    assert "rerun-1.log" in shown.stdout
    assert "3 passed, 1 failed" not in shown.stdout  # a failing check shows its failure instead
