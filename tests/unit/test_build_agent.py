"""`build_agent` finds each kind's adapter by name (its module imports the agents package, so the
package cannot import it at the top): a kind whose entry is missing or misspelt fails here."""

from __future__ import annotations

import pytest

from agentctl.domain.agent import AgentKind, AgentSpec
from agentctl.execution.agents import build_agent


@pytest.mark.parametrize("kind", list(AgentKind))
def test_every_kind_builds_its_own_adapter(kind: AgentKind) -> None:
    agent = build_agent(AgentSpec(kind, "true" if kind is AgentKind.COMMAND else ""))
    expected = "NoopAgent" if kind is AgentKind.NOOP else f"{kind.value.capitalize()}Agent"
    assert type(agent).__name__ == expected
    assert callable(agent.run)
