"""`patch:FILE.diff`: a diff produced elsewhere is the agent's whole output.

It is applied directly (an APPLY_PATCH step, not a guarded tool call): the boundary check on the
resulting patch, not the tool guard, judges it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from agentctl.domain.agent import AgentSpec
from agentctl.domain.enums import StepType
from agentctl.domain.errors import BadInput
from agentctl.execution.agents import AgentOutcome, AgentSession
from agentctl.execution.agents.spec import read_pinned
from agentctl.execution.process import run_to_file


class PatchAgent:
    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec

    def run(self, session: AgentSession) -> AgentOutcome:
        name = Path(self.spec.value).name
        with session.step(StepType.APPLY_PATCH, f"apply {name}") as step:
            try:
                data = read_pinned(self.spec)
            except (BadInput, OSError) as error:
                step.fail("patch_unreadable", str(error))
                return AgentOutcome(error=str(error))
            with tempfile.TemporaryDirectory(prefix="agentctl-patch-") as scratch:
                diff = Path(scratch) / name
                diff.write_bytes(data)
                log = Path(scratch) / "git-apply.log"
                result = run_to_file(["git", "apply", "--whitespace=nowarn", str(diff)],
                                     cwd=session.workspace, env=session.env, output=log,
                                     timeout=120, should_stop=session.should_stop)
                detail = log.read_text(errors="replace").strip().splitlines()
            step.note(patchSha256=self.spec.digest, patch=self.spec.value)
            if result.exit_code != 0:
                reason = detail[0] if detail else f"exit {result.exit_code}"
                step.fail("patch_does_not_apply", reason)
                return AgentOutcome(error=f"{name} does not apply to the base commit: {reason}")
        return AgentOutcome()
