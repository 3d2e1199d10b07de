"""A traced Claude Code run: the real CLI gets the attempt's trace context and its own spans
reach the same OTLP receiver nested under agentctl's `invoke_agent` span. The model (Anthropic's
API) and the collector are the two fakes: both are boundaries agentctl does not own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench, claude_config
from tests.agents.fake_models import Call, FakeModel, Script, Text
from tests.otlp_receiver import Receiver, otlp_receiver

TURNS = [
    [Text("Looking first."), Call("Read", {"file_path": "{cwd}/payments/refunds.py"})],
    [Call("Bash", {"command": "git push origin main", "description": "publish"})],
    [Text("Done.")],
]


@pytest.fixture(scope="module")
def traced(payments: tuple[Path, Path], claude_cli: Path, anthropic: FakeModel,
           run_agentctl: Any) -> Iterator[tuple[dict[str, Any], Receiver]]:
    root, repository = payments
    with otlp_receiver() as receiver:
        bench = AgentBench(root, repository, run_agentctl, {
            "ANTHROPIC_BASE_URL": anthropic.url, "ANTHROPIC_API_KEY": "sk-ant-fake-key-0123",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
        bench.config(claude_config(claude_cli))
        anthropic.script = Script(TURNS)
        task = bench.submit("Look at refunds")
        run = bench.start(task, "claude")
        yield run, receiver


def test_claude_spans_nest_under_the_attempts_invoke_agent_span(traced) -> None:
    run, receiver = traced
    ours = [s for s in receiver.spans if s.service == "agentctl"]
    agent = [s for s in ours if s.name == "invoke_agent claude"]
    assert len(agent) == 1, [s.name for s in ours]
    theirs = [s for s in receiver.spans if s.service != "agentctl"]
    assert theirs, f"Claude Code sent no spans (paths: {receiver.paths})"
    assert {s.trace_id for s in theirs} == {agent[0].trace_id}
    interaction = [s for s in theirs if s.name == "claude_code.interaction"]
    assert interaction and all(s.parent_id == agent[0].span_id for s in interaction)
    by_id = {s.span_id: s for s in receiver.spans}
    for span in theirs:  # every Claude span hangs, through its parents, from our agent span
        parent = span
        while parent.parent_id and parent.span_id != agent[0].span_id:
            parent = by_id[parent.parent_id]
        assert parent.span_id == agent[0].span_id, span.name


def test_our_denied_call_and_claudes_tool_span_are_in_one_trace(traced) -> None:
    _, receiver = traced
    push = [s for s in receiver.spans if s.name == "execute_tool claude.Bash"]
    assert push and push[0].attributes["agentctl.decision"] != "ALLOWED"
    assert push[0].attributes["agentctl.policy.rule"].startswith("deny: git push")
