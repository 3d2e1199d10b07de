"""A `command:` agent through the model gateway (`[agents.command] gateway`): the command gets
the gateway's base URL and a placeholder key; the real key stays in agentctl's environment.

The agent runs as one `agent.exec` call; while it runs, the call's stop signal (polled on the
attempt's thread) records each exchange the gateway queued as a MODEL_PLANNING step and stops
the agent once a budget is spent. Afterwards the transcript and the gateway's cost report are
one SUMMARIZE_LOG step, as for the native agents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from agentctl.domain.agent import CommandGateway
from agentctl.domain.enums import ArtifactType, ArtifactVisibility, StepType
from agentctl.domain.errors import ModelUnreachable
from agentctl.domain.redaction import Redactor
from agentctl.domain.spec import Budget
from agentctl.execution.agents import AgentOutcome
from agentctl.execution.agents.guards import BudgetGuard
from agentctl.execution.gateway.attach import attach_command, budget_limits
from agentctl.services.attempts.evidence import Redactions, json_artifact
from agentctl.services.attempts.model_exchanges import model_unreachable, record_exchange
from agentctl.services.ports import AttemptLedger, StepEnd

SETTLE_SECONDS = 5.0  # for the exchanges still under way when the agent ended


class CommandThroughGateway:
    """One attempt's gateway for its `command:` agent, and what it recorded."""

    def __init__(self, ledger: AttemptLedger, redactor: Redactor, budget: BudgetGuard,
                 settings: CommandGateway, limits: Budget, env: Mapping[str, str]) -> None:
        """ValueError when the upstream the environment names is no http(s) URL."""
        self.ledger, self.redactor, self.budget, self.settings = ledger, redactor, budget, settings
        attached = attach_command(settings.api, env, prices=settings.prices,
                                  limits=budget_limits(limits.max_tokens, limits.max_cost_usd),
                                  timeout_seconds=limits.model_timeout_seconds)
        self.gateway, self.env = attached.gateway, attached.env
        self.said: list[dict[str, object]] = []
        self.redactions = Redactions(redactor)  # what each request repeats, redacted once

    def watching(self, stop: Callable[[], bool]) -> Callable[[], bool]:
        """The agent process's stop signal: each poll records what came in, and says stop once
        a budget is spent (the gateway ended that answer and refuses any further request)."""
        def should_stop() -> bool:
            self.record()
            return self.gateway.spent is not None or stop()
        return should_stop

    def record(self) -> None:
        for exchange in self.gateway.drain():
            said = record_exchange(self.ledger, self.redactions, exchange)
            if said is not None:
                self.said.append(said)
        self.budget.spent(cost_usd=self.gateway.cost_usd, tokens=self.gateway.tokens)

    def close(self) -> None:
        self.gateway.close()

    def finish(self, outcome: AgentOutcome) -> AgentOutcome:
        """Everything on record, the gateway closed; the outcome, naming the budget and the
        spend when a budget stopped the agent. ModelUnreachable when the agent did not complete
        and the model could not be reached (its last request failed, the gateway's retries
        used up): the vendor's fault, not the agent's."""
        self.gateway.settled(SETTLE_SECONDS)
        self.close()
        self.record()
        gateway = self.gateway
        report = {"agent": "command", "api": self.settings.api.value, "source": "gateway",
                  "modelRequests": gateway.requests, "costUsd": round(gateway.cost_usd, 6),
                  "inputTokens": gateway.input_tokens, "outputTokens": gateway.output_tokens,
                  "totalTokens": gateway.tokens, "budgetStop": gateway.spent}
        step = self.ledger.begin_step(StepType.SUMMARIZE_LOG, "model transcript and cost",
                                      live=False)
        self.ledger.end_step(step, StepEnd(artifacts=[
            json_artifact(self.ledger.blobs, {"source": "gateway", "turns": self.said},
                          name="model-transcript.json",
                          type_=ArtifactType.MODEL_TRANSCRIPT_SUMMARY, redactor=self.redactor,
                          visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER),
            json_artifact(self.ledger.blobs, report, name="cost-report.json",
                          type_=ArtifactType.COST_REPORT, redactor=self.redactor,
                          visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER)],
            attributes={"costUsd": report["costUsd"], "tokens": gateway.tokens,
                        "summary": f"${report['costUsd']}, {gateway.tokens} tokens, "
                                   f"{gateway.requests} model requests"}))
        if gateway.spent is None:
            if outcome.error is not None and gateway.unreachable is not None:
                raise ModelUnreachable(model_unreachable(gateway.unreachable))
            return outcome
        over = self.budget.check()
        if over is not None and over.reason and gateway.spent in (over.matched_rule or ""):
            why = f"{over.matched_rule}): {over.reason}"
        else:
            why = (f"budget: {gateway.spent}): the agent has spent {gateway.tokens} model "
                   f"tokens, ${gateway.cost_usd:.4f}")
        return AgentOutcome(error=f"the agent was stopped by its budget ({why}")
