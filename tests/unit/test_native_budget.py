"""Budgets a native agent reports against: cost and tokens bite once spent, naming the spend."""

from __future__ import annotations

from agentctl.domain.enums import ToolDecision
from agentctl.domain.spec import Budget
from agentctl.execution.agents.guards import BudgetGuard


def budget(**limits: object) -> Budget:
    return Budget(max_attempts=1, wall_seconds=60, max_tool_calls=100, max_output_bytes=10**6,
                  backoff_initial_seconds=0, backoff_max_seconds=0, **limits)  # type: ignore[arg-type]


def test_cost_and_tokens_bite_once_spent_and_say_how_much() -> None:
    guard = BudgetGuard(budget(max_cost_usd=0.5, max_tokens=1000))
    guard.spent(cost_usd=0.49, tokens=999)
    assert guard.check() is None
    guard.spent(cost_usd=0.51, tokens=10)  # totals: tokens never go back down
    over = guard.check()
    assert over is not None and over.decision is ToolDecision.DENIED_BY_BUDGET
    assert over.matched_rule == "budget: max_cost_usd 0.5" and "$0.5100" in (over.reason or "")
    guard.spent(cost_usd=0.0, tokens=1000)
    assert guard.tokens == 1000 and guard.cost_usd == 0.51


def test_no_bound_means_no_bound() -> None:
    guard = BudgetGuard(budget())
    guard.spent(cost_usd=10**6, tokens=10**9)
    assert guard.check() is None
