"""What this machine offers a run, as `doctor` and `sandbox check` report it: whether the OS
sandbox starts (bubblewrap, and which), what caps a run's processes and memory (a cgroup of its
own, or rlimits), and whether workspaces can be overlay views of the base-tree cache. The
commands ask here rather than the sandbox and workspace adapters themselves."""

from __future__ import annotations

from pathlib import Path

from agentctl.execution.sandboxing import bubblewrap
from agentctl.execution.sandboxing.bubblewrap import SandboxCheck
from agentctl.execution.sandboxing.limits import CgroupLayout, layout
from agentctl.execution.workspaces import overlay

SANDBOX_HINT = bubblewrap.HINT  # what to install or allow when the sandbox cannot start


def sandbox_check() -> SandboxCheck:
    """Start a process in the sandbox here: whether it works, with which bubblewrap."""
    return bubblewrap.check()


def limits_layout() -> CgroupLayout:
    """How this machine's cgroups are laid out for agentctl: what caps each run, or the fix."""
    return layout()


def overlay_views(scratch: Path) -> str | None:
    """None when workspaces can be overlay views of the base-tree cache (tried in `scratch`);
    else why not, in the kernel's words where it gave them."""
    if overlay.supported(scratch):
        return None
    return overlay.refusal() or "this kernel refused an overlay mount"
