"""The warning a run without the sandbox prints, apart from `sandbox check`: a run prints it,
and needs none of what the check probes (bubblewrap, cgroups, overlays, the agents' hook)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentctl.cli.output import err
from agentctl.domain.sandbox import SandboxMode

if TYPE_CHECKING:
    from agentctl.config import Config


def warn_unsandboxed(config: Config) -> None:
    """Say it loudly on stderr when a run went (or will go) unsandboxed."""

    if config.sandbox.mode is SandboxMode.OFF:
        err().print("agentctl: WARNING: the sandbox is OFF: the run's processes (agent, tools, "
                    "verification, judge) run with your permissions, and its verdict needs a "
                    "human approval", highlight=False, markup=False, soft_wrap=True)
