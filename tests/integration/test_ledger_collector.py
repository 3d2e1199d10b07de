"""The attempt's writer leaves the cyclic garbage collector alone (a use case changes no
process-wide setting: the installed command's pace is `_speedups.process`'s, at its entry), and
a batch waits as rows, not records, so the collector has little to walk."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from agentctl import config
from agentctl.domain.agent import AgentKind, AgentSpec
from agentctl.domain.clock import utcnow
from agentctl.domain.enums import ToolDecision, ToolOutcome
from agentctl.domain.events import NewEvent
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.home import resolve_home
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import submit_task
from agentctl.services.lifecycle.ledger import Ledger
from agentctl.services.lifecycle.runs import create_run, lease_run
from agentctl.services.ports import CallRequest
from agentctl.store.storage import Store


def _ledger(repo: Path, tmp_path: Path) -> Ledger:
    store = Store(resolve_home(str(tmp_path / "home")))
    settings = config.defaults()
    task = submit_task(store, settings, TaskRequest(repository=str(repo), task_type="custom",
                                                    instruction="t"), cwd=tmp_path)
    run = create_run(store, settings, task.task_id, agent=AgentSpec(AgentKind.NOOP))
    lease = lease_run(store, worker_id="t", ttl_seconds=600, run_id=run.run_id)
    assert lease is not None
    return Ledger(store, lease, spec_digest=run.spec_digest)


def _call(ledger: Ledger) -> None:
    ledger.finished_call(CallRequest(
        tool="fs.write", arguments_json=json.dumps({"path": "a.txt"}),
        decision=ToolDecision.ALLOWED, matched_rule="workspace", denial_reason=None,
        requested_at=utcnow()), ToolResult(outcome=ToolOutcome.OK, exit_code=0))


def test_a_batched_write_leaves_the_collector_as_it_is(repo: Path, tmp_path: Path) -> None:
    ledger = _ledger(repo, tmp_path)
    _call(ledger)
    with ledger.write():
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_batch_waits_as_rows_not_as_records(repo: Path, tmp_path: Path) -> None:
    """Batched calls are held by the store encoded: no step, tool call or event record stays
    alive for the collector to walk until the batch is written (but the first event, which the
    write may still seal the rows into)."""
    ledger = _ledger(repo, tmp_path)
    gc.collect()
    before = _records()
    for _ in range(50):
        _call(ledger)
    gc.collect()
    assert _records() - before <= 1  # of 200 records: 50 steps, 50 calls, 100 events
    ledger.flush()


def _records() -> int:
    return sum(1 for thing in gc.get_objects() if isinstance(thing, (Step, ToolCall, NewEvent)))
