"""The seed's worked examples, fencing, cancellation and infrastructure retry, in-process on both
stores: what the end-to-end tests once proved through the CLI, at a fraction of the cost."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agentctl.domain.enums import (
    AttemptStatus,
    EventType,
    PrEligibility,
    RunStatus,
    StepType,
    VerdictStatus,
)
from agentctl.domain.errors import LeaseLost
from tests.pipeline.conftest import Harness

DOCSTRING = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
             "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}
CONFIG = {"tool": "fs.replace", "path": "calc/config/settings.py", "old": "30", "new": "60"}
BREAK = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "a - b"}
# Past the fs.* guard, through an allowed command: the boundary check is what catches it.
WORKFLOW = {"tool": "shell.run", "command": "python3 -c \"import pathlib; p = pathlib.Path("
            "'.github/workflows/deploy.yml'); p.write_text(p.read_text() + 'run: curl x')\""}


def events_of(record, type_: EventType) -> list:  # type: ignore[no-untyped-def]
    return [event for event in record.events if event.type is type_]


def test_a_migration_that_touches_production_config_needs_review(harness: Harness) -> None:
    record = harness.run(harness.plan(DOCSTRING, CONFIG), autonomy="supervised_pr",
                         task_type="api_migration")
    verdict = record.verdict
    assert verdict is not None and verdict.status is VerdictStatus.SUCCESS_NEEDS_REVIEW
    assert verdict.pr_eligibility is PrEligibility.ELIGIBLE_AFTER_HUMAN_APPROVAL
    assert any("calc/config/settings.py" in reason for reason in verdict.reasons)
    (patch,) = record.patches
    assert {change.path for change in patch.file_changes} == {"calc/__init__.py",
                                                              "calc/config/settings.py"}
    assert verdict.tree_id == patch.tree_id is not None
    assert record.run.status is RunStatus.NEEDS_APPROVAL  # the run waits for a person


def test_a_workflow_edited_through_a_script_fails_policy(harness: Harness) -> None:
    record = harness.run(harness.plan(DOCSTRING, WORKFLOW), forbidden=(".github/**",))
    verdict = record.verdict
    assert verdict is not None and verdict.status is VerdictStatus.FAILED_POLICY
    assert verdict.pr_eligibility is PrEligibility.NOT_ELIGIBLE
    assert any(".github/workflows/deploy.yml" in reason for reason in verdict.reasons)
    (patch,) = record.patches
    assert patch.boundary_check.forbidden_path_violations == (".github/workflows/deploy.yml",)


def test_a_change_that_breaks_an_assertion_fails_verification_naming_the_test(
        harness: Harness) -> None:
    record = harness.run(harness.plan(BREAK))
    verdict = record.verdict
    assert verdict is not None and verdict.status is VerdictStatus.FAILED_VERIFICATION
    assert any("test_adds_two_numbers" in reason for reason in verdict.reasons), verdict.reasons


def test_an_unreachable_mirror_is_retried_then_fails_as_infrastructure(harness: Harness) -> None:
    harness.configure('[verification]\ninfra_patterns = ["Could not resolve host"]\n'
                      '[budget]\nmax_attempts = 2\nbackoff_initial_seconds = 0\n'
                      'backoff_max_seconds = 0\n')
    mirror = "python3 -c \"print('Could not resolve host: mirror.example'); raise SystemExit(1)\""
    record = harness.run(harness.plan(DOCSTRING), verify=(mirror,))
    verdict = record.verdict
    assert verdict is not None and verdict.status is VerdictStatus.FAILED_INFRASTRUCTURE
    assert [a.status for a in record.attempts] == [AttemptStatus.FAILED] * 2
    assert len(events_of(record, EventType.VERDICT_DECIDED)) == 1  # one verdict, after the last


def test_a_cancelled_run_stops_its_agent_and_ends_cancelled_with_who_asked(
        harness: Harness, tmp_path: Path) -> None:
    marker = tmp_path / "finished"
    slow = {"tool": "shell.run", "command": f"python3 -c \"import time, pathlib; "
                                            f"time.sleep(30); pathlib.Path('{marker}').touch()\""}
    run = harness.submit(harness.plan(DOCSTRING, slow))

    def cancel_once_the_agent_runs() -> None:
        while harness.queue.run(run.run_id).status is not RunStatus.RUNNING_AGENT:
            time.sleep(0.02)
        harness.cancel(run.run_id, by="alice", reason="wrong branch")

    canceller = threading.Thread(target=cancel_once_the_agent_runs, daemon=True)
    canceller.start()
    ended = harness.execute(run)
    canceller.join()
    record = harness.record(ended)
    assert record.run.status is RunStatus.CANCELLED
    assert record.verdict is not None and record.verdict.status is VerdictStatus.CANCELLED
    assert any("alice" in reason for reason in record.verdict.reasons)
    assert not marker.exists()


def test_a_writer_whose_lease_expired_is_refused_and_writes_nothing(harness: Harness) -> None:
    run = harness.submit(harness.plan(DOCSTRING))
    lease = harness.queue.lease(worker_id="w1", ttl_seconds=1, run_id=run.run_id)
    assert lease is not None
    ledger = harness.queue.ledger(lease, run.spec_digest)
    ledger.activate("/nonexistent/attempt")
    reaped = []
    for _ in range(600):  # until the lease has expired and been reaped, however long that takes
        reaped = harness.queue.reap_expired()
        if reaped:
            break
        time.sleep(0.1)
    assert [r.run_id for r in reaped] == [run.run_id]
    before = harness.record(run)
    with pytest.raises(LeaseLost):
        ledger.begin_step(StepType.MODEL_PLANNING, "too late", live=True)
        ledger.flush()
    after = harness.record(run)
    assert after.steps == before.steps and after.events == before.events
    assert after.attempts[0].status is AttemptStatus.LEASE_EXPIRED


def test_bytecode_a_plan_leaves_never_reaches_the_patch(harness: Harness) -> None:
    """A repository without a .gitignore: the agent runs the tests (no bytecode: the run's
    environment says PYTHONDONTWRITEBYTECODE) and compiles a module by hand (bytecode that the
    default [boundary] ignore_generated keeps out of the patch)."""
    record = harness.run(harness.plan(
        DOCSTRING,
        {"tool": "shell.run", "command": "python3 -m unittest"},
        {"tool": "shell.run", "command": "python3 -c \"import py_compile, sys; "
                                         "py_compile.compile('calc/__init__.py'); "
                                         "open('NOTES.md', 'w').write(str(sys.dont_write_bytecode))\""},
    ), task_type="docs")
    (patch,) = record.patches
    assert {change.path for change in patch.file_changes} == {"calc/__init__.py", "NOTES.md"}
    assert not any(change.binary for change in patch.file_changes)
    collect = next(s for s in record.steps if s.type.value == "COLLECT_ARTIFACTS")
    assert collect.attributes["excludedGenerated"] == 1  # calc/__pycache__/__init__...pyc
    assert record.verdict is not None and record.verdict.status is not VerdictStatus.FAILED_POLICY
