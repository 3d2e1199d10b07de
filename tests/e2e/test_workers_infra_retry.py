"""Infrastructure failures take a fresh attempt while the budget lasts; code failures never do.

The verification command is a script that keeps its call count in a file outside every
workspace and fails like a flaky network for its first calls, so each attempt sees the next call.
Every scenario runs both inline (`run start`) and queued (`run start --detach` + `worker --once`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.e2e.workers_support import (
    Fleet,
    attempt_summary,
    clean_stderr,
    event_types,
)

INFRA = "verifier_infra_failure"
MODES = ["inline", "worker"]
LEASE = 60  # no lease runs out here: a late heartbeat on a loaded machine must not end one



def _run(fleet: Fleet, mode: str) -> tuple[str, int, dict[str, Any], list[dict[str, Any]]]:
    """One run of a plan that writes a file, executed `mode`: (run id, exit code, tree, events)."""
    task_id = fleet.submit()
    if mode == "inline":
        result = fleet.cli("run", "start", task_id, "--agent", fleet.writing_plan(), "--json",
                           expect=(0, 1))
        run_id, code = str(result.json()["runId"]), result.returncode
    else:
        run_id = fleet.queue(task_id, fleet.writing_plan())
        worker = fleet.cli("worker", "--once", "--poll", "0.1")
        clean_stderr(worker.stderr)
        code = 0
    tree, events = fleet.tree(run_id), fleet.events(run_id)
    return run_id, code, tree, events


@pytest.mark.parametrize("mode", MODES)
def test_a_verifier_timing_out_on_the_repository_twice_succeeds_on_attempt_3_of_3(
        fleet: Fleet, mode: str) -> None:
    verify, counter = fleet.flaky_verifier(failures=2)
    fleet.configure(max_attempts=3, verify=[verify], lease_ttl=LEASE)

    _, code, tree, events = _run(fleet, mode)

    assert code == 0
    assert tree["status"] == "COMPLETED"
    assert tree["verdict"]["status"] == "SUCCESS"
    assert attempt_summary(tree) == [(1, "FAILED", INFRA), (2, "FAILED", INFRA),
                                     (3, "COMPLETED", None)]
    for attempt in tree["attempts"][:2]:
        assert "repository timeout" in attempt["endReason"]
    assert len({a["leaseId"] for a in tree["attempts"]}) == 3
    assert counter.read_text() == "3"
    workspaces = [e["payload"]["workspace"] for e in events if e["type"] == "WorkspacePrepared"]
    assert len(set(workspaces)) == 3  # every attempt starts from a fresh workspace
    types = event_types(events)
    assert types.count("AttemptFailed") == 2
    assert types.count("LeaseAcquired") == 3
    assert types.count("RunQueued") == 3  # created, then after each infrastructure failure
    assert types.count("VerdictDecided") == 1
    fleet.audit_ok()


@pytest.mark.parametrize("mode", MODES)
def test_a_verifier_timing_out_on_the_repository_on_every_attempt_ends_failed_infrastructure(
        fleet: Fleet, mode: str) -> None:
    verify, counter = fleet.flaky_verifier(failures=2)
    fleet.configure(max_attempts=2, verify=[verify], lease_ttl=LEASE)

    _, code, tree, events = _run(fleet, mode)

    assert code == (1 if mode == "inline" else 0)
    assert tree["status"] == "FAILED"
    assert tree["verdict"]["status"] == "FAILED_INFRASTRUCTURE"
    assert tree["verdict"]["prEligibility"] == "NOT_ELIGIBLE"
    assert "repository timeout" in " ".join(tree["verdict"]["reasons"])
    assert attempt_summary(tree) == [(1, "FAILED", INFRA), (2, "FAILED", INFRA)]
    assert counter.read_text() == "2"  # no third call
    types = event_types(events)
    assert types.count("LeaseAcquired") == 2
    assert types.count("VerdictDecided") == 1
    assert types[-2:] == ["VerdictDecided", "RunCompleted"]
    fleet.audit_ok()


@pytest.mark.parametrize("mode", MODES)
def test_a_verifier_that_cannot_find_its_command_is_an_infrastructure_failure_and_retried(
        fleet: Fleet, mode: str) -> None:
    fleet.configure(max_attempts=2, verify=["no-such-build-tool --check"], lease_ttl=LEASE)

    _, code, tree, _ = _run(fleet, mode)

    assert tree["verdict"]["status"] == "FAILED_INFRASTRUCTURE"
    assert attempt_summary(tree) == [(1, "FAILED", INFRA), (2, "FAILED", INFRA)]


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_verification_is_decided_on_the_first_attempt_and_never_retried(
        fleet: Fleet, mode: str) -> None:
    verify, counter = fleet.flaky_verifier(failures=5, message="AssertionError: 2 != 3")
    fleet.configure(max_attempts=3, verify=[verify], lease_ttl=LEASE)

    _, code, tree, events = _run(fleet, mode)

    assert code == (1 if mode == "inline" else 0)
    assert tree["verdict"]["status"] == "FAILED_VERIFICATION"
    assert attempt_summary(tree) == [(1, "COMPLETED", None)]
    assert counter.read_text() == "1"
    assert "AttemptFailed" not in event_types(events)
    fleet.audit_ok()


@pytest.mark.parametrize("mode", MODES)
def test_the_next_attempt_after_an_infrastructure_failure_waits_out_its_backoff(
        fleet: Fleet, mode: str) -> None:
    verify, counter = fleet.flaky_verifier(failures=1, message="Could not resolve host: pypi")
    fleet.configure(max_attempts=2, backoff=1.5, verify=[verify], lease_ttl=LEASE)

    _, code, tree, events = _run(fleet, mode)

    assert code == 0
    assert tree["verdict"]["status"] == "SUCCESS"
    assert attempt_summary(tree) == [(1, "FAILED", INFRA), (2, "COMPLETED", None)]
    first, second = tree["attempts"]
    (requeued,) = [e for e in events if e["type"] == "RunQueued"
                   and e["payload"]["reason"] != "created"]
    not_before = datetime.fromisoformat(requeued["payload"]["notBefore"])
    ended = datetime.fromisoformat(first["endedAt"])
    assert not_before - ended == timedelta(seconds=1.5)
    assert datetime.fromisoformat(second["startedAt"]) >= not_before
    assert counter.read_text() == "2"


def test_a_repository_that_cannot_be_cloned_is_retried_then_ends_failed_infrastructure(
        fleet: Fleet) -> None:
    fleet.configure(max_attempts=2, lease_ttl=LEASE)
    run_id = fleet.queue(fleet.submit(), fleet.writing_plan())
    fleet.repo.rename(fleet.repo.with_name("moved-away"))

    worker = fleet.cli("worker", "--once", "--poll", "0.1")

    clean_stderr(worker.stderr)
    tree = fleet.tree(run_id)
    assert tree["verdict"]["status"] == "FAILED_INFRASTRUCTURE"
    assert attempt_summary(tree) == [(1, "FAILED", "clone_failed"), (2, "FAILED", "clone_failed")]
    assert "clone failed" in " ".join(tree["verdict"]["reasons"])
    assert fleet.workspaces() == []
    fleet.audit_ok()
