"""The agents whose model requests pass through agentctl's gateway: claude, codex and the other
native CLIs (their hooks and their gateway: `native_calls`), and a `command:` agent given one
(`command_gateway`). The pipeline loads this module for such an agent only: a run without a
model gateway never loads the gateway's server (http.client, the meter)."""

from __future__ import annotations

from dataclasses import replace

from agentctl.execution.agents import AgentOutcome, AgentSession, build_agent
from agentctl.execution.agents.guards import BudgetGuard
from agentctl.execution.agents.tool_context import ToolContext
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.command_gateway import CommandThroughGateway
from agentctl.services.attempts.native_calls import run_native
from agentctl.services.attempts.runtime import ToolRuntime


class ThroughGateway:
    """One attempt's agent run through its model gateway: `prepare` before its tools are set up
    (a command's gateway starts and the command's environment points at it), `run` with them."""

    def __init__(self, ctx: AttemptContext, budget: BudgetGuard) -> None:
        self._ctx, self._budget = ctx, budget
        self._command: CommandThroughGateway | None = None

    def prepare(self, tool_context: ToolContext) -> ToolContext | AgentOutcome:
        """The tools' context for the agent, or the outcome of an agent that cannot start."""
        spec = self._ctx.spec
        if spec.command_gateway is None:  # a native agent's gateway starts with its session
            return tool_context
        try:
            self._command = CommandThroughGateway(
                self._ctx.ledger, self._ctx.redactor, self._budget, spec.command_gateway,
                spec.budget, tool_context.env)
        except ValueError as error:
            return AgentOutcome(error=f"the agent cannot start its model gateway: {error}")
        return replace(tool_context, env=self._command.env,
                       should_stop=self._command.watching(self._ctx.stop))

    def run(self, runtime: ToolRuntime, session: AgentSession) -> AgentOutcome:
        if self._ctx.spec.agent_settings is not None:  # claude or codex: its hooks, its gateway
            return run_native(self._ctx, runtime, session)
        through = self._command
        assert through is not None, "prepare() starts a command's gateway"
        try:
            outcome = build_agent(self._ctx.spec.agent_spec).run(session)
        except BaseException:
            through.close()
            raise
        return through.finish(outcome)
