"""A traced Codex run: the real CLI gets the attempt's trace context (`TRACEPARENT`) and an
`[otel] trace_exporter` to the same OTLP receiver, so its spans nest under agentctl's
`invoke_agent` span. The model (an OpenAI Responses API) and the collector are the fakes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench
from tests.agents.fake_models import Call, FakeModel, Script, Text
from tests.agents.test_codex import codex_config
from tests.otlp_receiver import Receiver, otlp_receiver

TURNS = [[Call("exec_command", {"cmd": "git push origin main"})], [Text("Done.")]]


@pytest.fixture(scope="module")
def traced(payments: tuple[Path, Path], codex_cli: Path, openai: FakeModel,
           run_agentctl: Any) -> Iterator[tuple[dict[str, Any], Receiver]]:
    root, repository = payments
    with otlp_receiver() as receiver:
        bench = AgentBench(root, repository, run_agentctl, {
            "FAKE_API_KEY": "sk-fake-openai-0123456789",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
        bench.config(codex_config(codex_cli, openai.url))
        openai.script = Script(TURNS)
        run = bench.start(bench.submit("Publish"), "codex")
        yield run, receiver


def test_codex_spans_nest_under_the_attempts_invoke_agent_span(traced) -> None:
    _, receiver = traced
    agent = [s for s in receiver.spans if s.name == "invoke_agent codex"]
    assert len(agent) == 1
    theirs = [s for s in receiver.spans if s.service != "agentctl"]
    assert theirs, f"Codex sent no spans (paths: {receiver.paths})"
    ours = [s for s in theirs if s.trace_id == agent[0].trace_id]
    # Codex 0.171 continues our trace for its work (`codex.exec`, `run_turn`, the tool calls);
    # a few housekeeping spans (`auth`, `session_loop`, shutdown) start traces of their own
    # whatever TRACEPARENT says.
    assert {"codex.exec", "run_turn", "exec_command"} <= {s.name for s in ours}
    assert len(ours) >= 0.9 * len(theirs)
    by_id = {s.span_id: s for s in receiver.spans}
    ends = [(span.name, _top(span, by_id, agent[0].span_id)) for span in ours]
    # Codex's own work hangs, through its parents, from our agent span. A span whose parent Codex
    # never sent (its exporter may not flush every span as the CLI is stopped) proves nothing
    # either way; one that reaches a root other than ours would be a real break.
    assert ("codex.exec", agent[0].span_id) in ends, ends
    assert all(end in (agent[0].span_id, None) for _, end in ends), ends


def _top(span, by_id: dict, agent_id: str) -> str | None:  # type: ignore[no-untyped-def]
    """Where the span's chain of parents ends: our agent span's id, a root span's own id, or
    None when a parent in the chain was never received."""
    while span.parent_id and span.span_id != agent_id:
        if span.parent_id not in by_id:
            return None
        span = by_id[span.parent_id]
    return span.span_id
