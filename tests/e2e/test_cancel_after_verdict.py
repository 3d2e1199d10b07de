"""Cancelling a run that awaits approval: its verdict was decided and stands, the run ends
CANCELLED, and the record says so in words (the cancel's output, `run show`, the event); no
approval, and so no PR, can follow."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.people_support import submit_and_run
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench

BEFORE_PR = "before its PR: the verdict stands, and no PR will be opened"
DOCUMENT = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
            "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}


@pytest.fixture(scope="module")
def cancelled(tmp_path_factory: pytest.TempPathFactory, repo_maker: Callable[..., Any],
              run_agentctl: Callable[..., Any]) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("cancel-after-verdict")
    bench = Bench(root, run_agentctl)
    repo = repo_maker(root / "calc", CALC_FILES)
    run = submit_and_run(bench, repo, "--autonomy", "supervised_pr", "--verify", UNITTEST,
                         agent=f"script:{bench.plan('doc.toml', DOCUMENT)}",
                         instruction="document add")
    assert run["status"] == "NEEDS_APPROVAL", run
    run_id = run["runId"]
    cancel = bench.cli("run", "cancel", run_id, "--by", "dana", "--reason", "not this week")
    yield {"bench": bench, "run": run, "cancel": cancel,
           "show": bench.json("run", "show", run_id),
           "shown": bench.cli("run", "show", run_id).stdout,
           "events": bench.events(run_id),
           "again": bench.cli("run", "cancel", run_id, expect=(2,)),
           "approval": bench.cli("verdict", "approve", run_id, "--by", "erin", "--reason",
                                 "looks fine", expect=(2,)),
           "audit": bench.cli("audit", "verify", "--json").json()}


def test_the_run_ends_cancelled_under_the_verdict_it_had(cancelled: dict[str, Any]) -> None:
    decided, shown = cancelled["run"]["verdict"], cancelled["show"]
    assert shown["status"] == "CANCELLED"
    assert shown["verdict"]["verdictId"] == decided["verdictId"]
    assert shown["verdict"]["status"] == decided["status"] == "SUCCESS"
    assert (shown["cancelRequestedBy"], shown["cancelReason"]) == ("dana", "not this week")
    assert cancelled["audit"]["ok"] is True, cancelled["audit"]


def test_the_cancel_says_the_verdict_stands_and_no_pr_follows(
        cancelled: dict[str, Any]) -> None:
    run_id = cancelled["run"]["runId"]
    assert cancelled["cancel"].stdout.strip() == \
        f"cancelled {run_id} {BEFORE_PR} (its verdict: SUCCESS)"
    assert f"by dana (not this week) {BEFORE_PR}" in " ".join(cancelled["shown"].split())
    completed = [e for e in cancelled["events"] if e["type"] == "RunCompleted"][-1]
    assert completed["payload"]["status"] == "CANCELLED"
    assert completed["payload"]["verdictStatus"] == "SUCCESS"
    assert completed["payload"]["note"] == f"cancelled {BEFORE_PR}"


def test_after_it_an_approval_and_a_second_cancel_are_refused_in_one_line(
        cancelled: dict[str, Any], error_line: Callable[[str], str]) -> None:
    assert "already ended CANCELLED" in error_line(cancelled["again"].stderr)
    assert "awaits no approval" in error_line(cancelled["approval"].stderr)
