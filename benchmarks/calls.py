"""The timed loop the recording benchmarks share: a busy agent's tool calls, written through the
attempt's one writer exactly as the pipeline writes them."""

from __future__ import annotations

import json
import time

from agentctl.domain.clock import utcnow
from agentctl.domain.enums import ToolDecision, ToolOutcome
from agentctl.domain.step import ToolResult
from agentctl.services.ports import AttemptLedger, CallRequest


def record_fs_writes(ledger: AttemptLedger, calls: int, *, flush_every: int = 0) -> float:
    """Seconds to record `calls` allowed `fs.write` calls (a commit every `flush_every`
    calls when given, else the ledger's own batching), flushed at the end."""
    result = ToolResult(outcome=ToolOutcome.OK, output="ok", exit_code=0, output_bytes=2,
                        duration_ms=1)
    started = time.perf_counter()
    for index in range(calls):
        ledger.finished_call(CallRequest(
            tool="fs.write", arguments_json=json.dumps({"path": f"f{index}.txt"}),
            decision=ToolDecision.ALLOWED, matched_rule="workspace", denial_reason=None,
            requested_at=utcnow()), result)
        if flush_every and index % flush_every == flush_every - 1:
            ledger.flush()
    ledger.flush()
    return time.perf_counter() - started
