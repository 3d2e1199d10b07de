"""`command:CMD`: an external coding-agent CLI, run in the workspace as one `agent.exec` call.

Placeholders `{instruction}`, `{workspace}` and `{task_file}` are replaced shell-quoted. The
agent's output is its transcript; the patch is whatever it left in the workspace.
"""

from __future__ import annotations

import shlex

from agentctl.domain.agent import AgentSpec
from agentctl.domain.enums import ToolOutcome
from agentctl.execution.agents import AgentOutcome, AgentSession


def render_command(template: str, session: AgentSession) -> str:
    values = {
        "instruction": shlex.quote(session.instruction),
        "workspace": shlex.quote(str(session.workspace)),
        "task_file": shlex.quote(str(session.task_file)),
    }
    rendered = template
    for name, value in values.items():
        rendered = rendered.replace("{" + name + "}", value)
    return rendered


class CommandAgent:
    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec

    def run(self, session: AgentSession) -> AgentOutcome:
        result = session.tools.call("agent.exec", {"command": render_command(self.spec.value,
                                                                               session)},
                                    title="external agent")
        if result.ok:
            return AgentOutcome()
        if result.outcome is ToolOutcome.DENIED:
            return AgentOutcome(error=f"the agent could not run: {result.error}")
        return AgentOutcome(error=f"the agent exited with {result.exit_code}: "
                                  f"{result.error or _last_line(result.output)}")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"
