"""Faults a worker outlives: a PostgreSQL blip under a held lease, a full disk, a read-only
artifact store. Real `agentctl worker` processes, the session's own PostgreSQL server (stopped
and restarted here: a test process runs one test at a time, so no other test sees the gap), and
a real tmpfs for the disk that fills up (the tests run as root)."""

from __future__ import annotations

import time

import pytest

from tests.e2e.workers_support import Fleet, attempt_summary, clean_stderr, wait_until
from tests.pg_server import PostgresServer


def test_a_3_s_postgresql_outage_under_a_held_lease_is_outlived_by_the_same_attempt(
        fleet: Fleet, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCTL_DATABASE_URL", raising=False)
    fleet.bench.config(
        "[sandbox]\nmode = 'off'\n[budget]\nmax_attempts = 2\nbackoff_initial_seconds = 0\n"
        "[worker]\nlease_ttl_seconds = 12\npoll_seconds = 0.1\n"
        "[verification]\ncommands = ['true']\nbaseline = 'never'\nreruns = 0\n"
        f"[store]\nurl = '{postgres.database()}'\n")
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=16, later=0))
    worker = fleet.start_worker("--once")
    wait_until(fleet.agent_pids, timeout=60, what="the agent to start")
    time.sleep(0.5)  # a heartbeat and some cancel polls on the way
    postgres.stop("fast")
    try:
        time.sleep(3)
    finally:
        postgres.restart()

    assert worker.wait(timeout=120) == 0, worker.stderr()
    clean_stderr(worker.stderr())
    tree = fleet.tree(run_id)
    assert tree["status"] == "COMPLETED"
    assert attempt_summary(tree) == [(1, "COMPLETED", None)]  # no second attempt
    assert len(fleet.agent_pids()) == 1
