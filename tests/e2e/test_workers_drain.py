"""Several workers draining one queue: each run is leased once, executed once, decided once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.workers_support import Fleet, clean_stderr, fleet_at

RUNS = 40
WORKERS = 4


@pytest.fixture(scope="module")
def drained(tmp_path_factory: pytest.TempPathFactory, run_agentctl: Any,
            agentctl_executable: str) -> Iterator[dict[str, Any]]:
    """40 queued noop runs drained by 4 `worker --once --poll 0.05` processes at once."""
    root = tmp_path_factory.mktemp("drain")
    with fleet_at(root, run_agentctl, agentctl_executable) as fleet:
        fleet.configure(max_attempts=2, verify=["true"])
        queued = fleet.queue_many(fleet.submit(), RUNS)
        workers = [fleet.start_worker("--once", "--poll", "0.05", "--lease-ttl", "5")
                   for _ in range(WORKERS)]
        codes = [worker.wait(timeout=240) for worker in workers]
        yield {"fleet": fleet, "queued": queued, "workers": workers, "codes": codes}


def test_four_workers_drain_forty_runs_and_exit(drained: dict[str, Any]) -> None:
    assert drained["codes"] == [0] * WORKERS
    fleet: Fleet = drained["fleet"]
    assert fleet.json("run", "list", "--status", "QUEUED") == []
    assert fleet.workspaces() == []


def test_no_worker_meets_a_locked_database_or_a_traceback(drained: dict[str, Any]) -> None:
    for worker in drained["workers"]:
        clean_stderr(worker.stderr())


def test_every_drained_run_ends_with_exactly_one_verdict_on_its_first_attempt(
        drained: dict[str, Any]) -> None:
    fleet: Fleet = drained["fleet"]
    runs = fleet.json("run", "list", "--limit", str(RUNS * 2))
    assert sorted(run["runId"] for run in runs) == sorted(drained["queued"])  # none lost
    assert {run["status"] for run in runs} == {"FAILED"}  # noop: no patch, nothing to verify
    assert {run["verdict"]["status"] for run in runs} == {"FAILED_AGENT_COULD_NOT_COMPLETE"}
    verdicts = Counter(row[0] for row in fleet.query("SELECT run_id FROM verdict"))
    assert verdicts == Counter({run_id: 1 for run_id in drained["queued"]})
    attempts = fleet.query("SELECT run_id, attempt_number, status FROM attempt")
    assert sorted(run_id for run_id, _, _ in attempts) == sorted(drained["queued"])
    assert {(number, status) for _, number, status in attempts} == {(1, "COMPLETED")}


def test_every_drained_run_was_leased_once_and_the_workers_shared_the_work(
        drained: dict[str, Any]) -> None:
    fleet: Fleet = drained["fleet"]
    events = fleet.events()
    leases = [e for e in events if e["type"] == "LeaseAcquired"]
    assert Counter(e["runId"] for e in leases) == Counter(drained["queued"])
    assert not [e for e in events if e["type"] in ("LeaseExpired", "AttemptFailed")]
    done = [worker.attempts_done() for worker in drained["workers"]]
    assert sum(done) == RUNS
    assert {e["payload"]["workerId"] for e in leases} == {
        worker.worker_id() for worker, count in zip(drained["workers"], done, strict=True) if count}
    fleet.audit_ok()
