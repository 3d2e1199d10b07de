"""The cgroups a sandboxed tree runs in, on this machine's real /sys/fs/cgroup: a group a killed
agentctl left behind is cleaned up, and it never stops a new group from being made (a reused pid
once made agentctl fall back to an rlimit alone)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentctl.domain.sandbox import SandboxLimits
from agentctl.execution.sandboxing.limits import launcher, layout, limited
from tests.machine import unavailable


def parents() -> list[Path]:
    where = layout()
    found = {p for p in (where.pids, where.memory) if p is not None}
    if not found:
        unavailable("no writable cgroup on this machine")
    return sorted(found)


def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_every_tree_gets_its_own_group_with_its_limits() -> None:
    parents()
    with limited(SandboxLimits()) as (_, first), limited(SandboxLimits()) as (_, second):
        assert first is not None and second is not None
        assert first.pids_limited and first.memory_limited
        assert set(first.directories).isdisjoint(second.directories)
        assert all(d.is_dir() for d in first.directories)
    assert not any(d.exists() for d in (*first.directories, *second.directories))


def test_the_empty_groups_of_a_killed_agentctl_are_removed_by_the_next_one() -> None:
    stale = [parent / f"agentctl-{dead_pid()}-1" for parent in parents()]
    for directory in stale:
        directory.mkdir()
    try:
        subprocess.run([sys.executable, "-c",
                        "from agentctl.execution.sandboxing.limits import layout; layout()"], check=True)
        assert not any(d.exists() for d in stale)
    finally:
        for directory in stale:
            if directory.exists():
                directory.rmdir()


def test_a_group_of_a_live_process_is_left_alone() -> None:
    live = [parent / f"agentctl-{1}-1" for parent in parents()]  # pid 1 never ends
    for directory in live:
        directory.mkdir()
    try:
        subprocess.run([sys.executable, "-c",
                        "from agentctl.execution.sandboxing.limits import layout; layout()"], check=True)
        assert all(d.is_dir() for d in live)
    finally:
        for directory in live:
            directory.rmdir()


def test_the_launcher_puts_the_command_and_its_children_in_every_group() -> None:
    parents()
    with limited(SandboxLimits()) as (launcher, group):
        assert group is not None
        done = subprocess.run([*launcher, "/bin/sh", "-c", "cat /proc/self/cgroup"],
                              capture_output=True, text=True, check=True)
    where = {line.split(":", 2)[2] for line in done.stdout.splitlines()}
    for directory in group.directories:
        assert any(directory.as_posix().endswith(path) and path.endswith(directory.name)
                   for path in where), (directory, done.stdout)


def test_on_cgroup_v1_the_launcher_moves_its_own_thread_which_takes_no_global_lock() -> None:
    """A pid written to `cgroup.procs` waits for an RCU grace period (5-20 ms here, every
    process); `0` written to `tasks` moves the writing thread alone, without that lock."""
    parents()
    with limited(SandboxLimits()) as (launcher, group):
        assert group is not None
        if group.unified:
            unavailable("the cgroups here are v2, which has no thread move for a domain group")
        script = launcher[2]
        for directory in group.directories:
            assert f"echo 0 > {directory / 'tasks'} " in script
        assert "cgroup.procs" not in script


# Under the memory rlimit: reserve 8 GB of address space (PROT_NONE, 0) without touching it (what the JVM,
# Node's WebAssembly and the agent CLIs' binaries do at start), then write 200 MB.
_RESERVE_THEN_WRITE = """
import ctypes, mmap
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
reserved = libc.mmap(None, 8 << 30, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                     | getattr(mmap, "MAP_NORESERVE", 0x4000), -1, 0)
print("reserved" if reserved not in (None, ctypes.c_void_p(-1).value) else "refused", flush=True)
try:
    data = bytearray(200 << 20)
    print("wrote")
except MemoryError:
    print("stopped")
"""


def test_the_memory_rlimit_stops_what_a_process_writes_not_what_it_reserves() -> None:
    """Without a cgroup the memory limit is an rlimit on data, not on address space: a 4 GB
    address-space limit made Copilot CLI's binary abort and Gemini CLI exit at start-up."""
    command = [*launcher(SandboxLimits(max_memory_mb=100), None), sys.executable, "-c",
               _RESERVE_THEN_WRITE]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["reserved", "stopped"], (done.stdout, done.stderr)
