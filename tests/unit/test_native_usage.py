"""Usage and cost an agent's stream claims are validated before a budget reads them: a forged
line (negative, fractional, absurd, NaN, or a total that shrinks) counts nothing and is a
finding in the agent's report."""

from __future__ import annotations

import json

from agentctl.domain.agent import AgentKind, AgentSpec
from agentctl.execution.agents.claude import ClaudeAgent
from agentctl.execution.agents.codex import CodexAgent
from agentctl.execution.agents.stream import StreamState


def _codex(*events: dict[str, object]) -> StreamState:
    state, agent = StreamState(), CodexAgent(AgentSpec(AgentKind.CODEX))
    for event in events:
        agent.read(event, state)
    return state


def _claude(*events: dict[str, object]) -> StreamState:
    state, agent = StreamState(), ClaudeAgent(AgentSpec(AgentKind.CLAUDE))
    for event in events:
        agent.read(json.loads(json.dumps(event)), state)
    return state


def test_a_forged_negative_codex_usage_counts_nothing_and_is_a_finding() -> None:
    real = {"type": "turn.completed", "usage": {"input_tokens": 9000, "output_tokens": 1000}}
    forged = {"type": "turn.completed", "usage": {"input_tokens": -999_999_000,
                                                  "output_tokens": -1000}}
    state = _codex(real, forged)
    assert (state.input_tokens, state.output_tokens, state.tokens) == (9000, 1000, 10_000)
    assert len(state.usage_findings) == 2 and "-999999000" in state.usage_findings[0]
    report = CodexAgent(AgentSpec(AgentKind.CODEX)).report(state)
    assert report["usageFindings"] == state.usage_findings and report["totalTokens"] == 10_000


def test_fractional_or_absurd_token_counts_are_refused() -> None:
    state = _codex({"type": "turn.completed", "usage": {"input_tokens": 1.5,
                                                        "output_tokens": 10**15}})
    assert state.tokens == 0 and len(state.usage_findings) == 2


def test_a_claude_result_cannot_lower_or_poison_the_cost_and_tokens() -> None:
    assistant = {"type": "assistant", "message": {"id": "m1", "content": [],
                                                   "usage": {"input_tokens": 500,
                                                             "output_tokens": 50}}}
    first = {"type": "result", "subtype": "success", "total_cost_usd": 0.25,
             "usage": {"input_tokens": 500, "output_tokens": 50}}
    state = _claude(assistant, first)
    assert (state.cost_usd, state.tokens) == (0.25, 550)
    for forged in (-5, float("inf"), 0.01, "1e9", 10**9):
        ClaudeAgent(AgentSpec(AgentKind.CLAUDE)).read(
            {"type": "result", "subtype": "success", "total_cost_usd": forged,
             "usage": {"input_tokens": 1, "output_tokens": -7}}, state)
    assert (state.cost_usd, state.tokens) == (0.25, 550)
    assert len([f for f in state.usage_findings if f.startswith("total_cost_usd")]) == 5
    assert any(f.startswith("output_tokens = -7") for f in state.usage_findings)


def test_honest_figures_leave_no_finding() -> None:
    state = _codex({"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 2}})
    assert state.usage_findings == [] and "usageFindings" not in \
        CodexAgent(AgentSpec(AgentKind.CODEX)).report(state)
