"""`script:PLAN.toml`: plays a list of tool calls through the tool runtime."""

from __future__ import annotations

from pathlib import Path

from agentctl.domain.agent import AgentSpec
from agentctl.domain.enums import ToolOutcome
from agentctl.domain.errors import BadInput
from agentctl.execution.agents import AgentOutcome, AgentSession
from agentctl.execution.agents.script_plan import load_plan
from agentctl.execution.agents.spec import read_pinned


class ScriptAgent:
    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec

    def run(self, session: AgentSession) -> AgentOutcome:
        try:
            plan = load_plan(Path(self.spec.value), read_pinned(self.spec))
        except (BadInput, OSError) as error:
            return AgentOutcome(error=f"cannot load plan: {error}")
        for number, step in enumerate(plan, start=1):
            if session.should_stop():
                return AgentOutcome(error="stopped before the plan finished")
            result = session.tools.call(step.tool, step.arguments, title=step.title)
            # A denial is an answer, not a crash: the plan goes on (as an agent would adapt).
            # A call that ran and failed stops the plan unless the step says on_error="continue".
            if result.outcome in (ToolOutcome.OK, ToolOutcome.DENIED):
                continue
            if step.stop_on_error:
                target = step.arguments.get("path") or step.arguments.get("command", "")
                what = step.title or f"{step.tool} {target}".strip()
                # named by the tree's number, the plan's beside it: one numbering on a screen
                return AgentOutcome(error=f"step {session.tools.last_step_number} (plan step "
                                          f"{number}, {what}) failed: "
                                          f"{result.error or f'exit {result.exit_code}'}")
        return AgentOutcome()
