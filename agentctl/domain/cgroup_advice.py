"""What `doctor` and `sandbox check` say about the limits on each run, from what the machine's
cgroups offer this process: the words must be true for whoever reads them (a normal user is
never told what binds root), name what is not enforced, and give a fix that works here.

systemd's delegation (`systemd-run --user --scope -p Delegate=yes`) hands out a cgroup v2 group:
it gives a run pids and memory limits only where the v2 hierarchy has those controllers. A
hybrid layout (a container's, often) keeps them on v1 and leaves v2 almost empty; there the fix
is a v1 group an administrator makes and hands over, not systemd.
"""

from __future__ import annotations

from dataclasses import dataclass

V2_NEEDED = frozenset({"pids", "memory"})
SYSTEMD_DELEGATION = "systemd-run --user --scope -p Delegate=yes"


@dataclass(frozen=True, slots=True, kw_only=True)
class CgroupFacts:
    """What the cgroups here offer this process (gathered by the sandboxing code)."""

    root: bool
    pids: bool  # each run can have a group with a process-count limit
    memory: bool  # each run can have a group with a memory limit
    unified: bool  # those groups are cgroup v2
    v2_controllers: frozenset[str]  # what the v2 hierarchy offers (empty: none mounted)
    systemd_user: bool  # a systemd user manager runs for this user


def describe(facts: CgroupFacts) -> str:
    """One line: which cgroup caps each run, and what only an rlimit caps instead."""
    if not facts.pids and not facts.memory:
        if facts.root:
            return "no writable cgroup: rlimits only (process count not enforced for root)"
        return ("no writable cgroup: rlimits only (the process count is not enforced per run: "
                "it caps all of your processes together; memory is a data-size rlimit)")
    kind = "cgroup v2" if facts.unified else "cgroup v1"
    held = ", ".join(name for name, has in (("pids", facts.pids), ("memory", facts.memory))
                     if has)
    if not facts.pids:
        lacking = ("process count not enforced for root" if facts.root else
                   "the process count is an rlimit: not enforced per run, it caps all of your "
                   "processes together")
        return f"{kind} ({held}); {lacking}"
    if not facts.memory:
        return f"{kind} ({held}); memory is a data-size rlimit"
    return f"{kind} ({held})"


def fix(facts: CgroupFacts) -> str | None:
    """What would give each run a pids and a memory group of its own (None: it has both)."""
    if facts.pids and facts.memory:
        return None
    if facts.root:
        return ("give agentctl a writable cgroup: a writable /sys/fs/cgroup (not a container "
                "that mounts it read-only), v1 pids and memory or v2 with both controllers")
    administrator = ("have an administrator make you a pids and a memory group on cgroup v1 and "
                     "chown each (the folder, cgroup.procs, tasks) to you, then start agentctl "
                     "in them")
    if not V2_NEEDED <= facts.v2_controllers:
        offered = ", ".join(sorted(facts.v2_controllers)) or "none"
        return (f"systemd's delegation ({SYSTEMD_DELEGATION}) cannot help here: the cgroup v2 "
                f"hierarchy has no pids and memory controllers (it offers: {offered}); "
                f"{administrator}, or run as root")
    if facts.systemd_user:
        return f"start agentctl in a cgroup systemd delegates to you: {SYSTEMD_DELEGATION} agentctl ..."
    return ("no systemd user session here to delegate a cgroup: log in through systemd "
            "(or enable lingering: loginctl enable-linger) and start agentctl with "
            f"{SYSTEMD_DELEGATION}, or {administrator}, or run as root")
