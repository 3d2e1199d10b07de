"""A worker killed (`kill -9`) while it checks a base out into the tree cache, or clones it into
the workspace with the cache off: nothing of it keeps writing, and the next worker builds the
entry (or clones again) and completes the run.

Real `agentctl worker` processes and real git. The builder's git is frozen (SIGSTOP) before the
worker is killed, so that it is caught halfway whatever the machine's speed; a git with no
death signal would stay there for good, holding the half-built folder.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_repo
from tests.e2e.workers_support import (
    Fleet,
    attempt_summary,
    clean_stderr,
    process_gone,
    wait_until,
)

FILES = 3000  # enough that checking the base out takes a while
CLONED_FILES = 1000  # enough that each of the two clones (the bare copy, the workspace) is seen


def _children() -> dict[int, list[int]]:
    table: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat[stat.rfind(")") + 2:].split()[1])
            table.setdefault(parent, []).append(int(entry.name))
    return table


def _gits_below(root: int) -> list[int]:
    """The git processes (after their exec) in `root`'s process tree."""
    table = _children()
    found, pending = [], list(table.get(root, ()))
    while pending:
        pid = pending.pop()
        pending.extend(table.get(pid, ()))
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "git":
                found.append(pid)
        except OSError:
            continue
    return found


def _cloning(gits: list[int]) -> list[int]:
    """`gits` once one of them is a `git clone` (the helpers it started with it), else none:
    the clone is what is to be caught halfway, not a git that runs before or after it."""
    return gits if any(b" clone " in _cmdline(pid) for pid in gits) else []


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return b""


@pytest.fixture
def frozen() -> Iterator[list[int]]:
    """Processes the test froze: killed afterwards, pass or fail."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_worker_killed_while_it_builds_the_tree_cache_leaves_no_git_and_the_next_run_succeeds(
        fleet: Fleet, frozen: list[int]) -> None:
    fleet.repo = make_repo(fleet.bench.root / "big", {
        f"pkg/m{index}.py": f"VALUE = {index}\n" * 20 for index in range(FILES)})
    fleet.configure(max_attempts=2)
    run_id = fleet.queue(fleet.submit(), fleet.writing_plan())
    builder = fleet.start_worker("--once", "--lease-ttl", "2", "--poll", "0.1")

    gits = wait_until(lambda: _gits_below(builder.pid), timeout=60, interval=0.005,
                      what="the worker to start git")
    for pid in gits:
        os.kill(pid, signal.SIGSTOP)
        frozen.append(pid)
    os.kill(builder.pid, signal.SIGKILL)  # the worker only: its git is in sessions of its own
    builder.wait(timeout=30)

    wait_until(lambda: all(process_gone(pid) for pid in gits), timeout=30,
               what=f"the killed worker's git {gits} to end")
    rescuer = fleet.cli("worker", "--once", "--lease-ttl", "2", "--poll", "0.1", timeout=300)
    clean_stderr(rescuer.stderr)
    assert fleet.status(run_id) == "COMPLETED", rescuer.stderr
    assert fleet.tree(run_id)["verdict"]["status"] == "SUCCESS"


def test_a_worker_killed_mid_clone_with_the_cache_off_leaves_no_workspace_and_the_run_succeeds(
        fleet: Fleet, frozen: list[int]) -> None:
    """With `[store] tree_cache_mb = 0` every workspace is a clone of its own: the worker is
    killed while git clones (git frozen, so halfway whatever the machine's speed). Its git dies
    with it, the attempt's lease is reclaimed and the run requeued (never a second verdict), the
    half-made workspace is removed, nothing is mounted, and the requeued run succeeds."""
    fleet.repo = make_repo(fleet.bench.root / "big", {
        f"pkg/m{index}.py": f"VALUE = {index}\n" * 20 for index in range(CLONED_FILES)})
    fleet.configure(max_attempts=2)
    config = fleet.bench.cwd / ".agentctl.toml"
    config.write_text(config.read_text() + "[store]\ntree_cache_mb = 0\n")
    run_id = fleet.queue(fleet.submit(), fleet.writing_plan())
    doomed = fleet.start_worker("--once", "--lease-ttl", "2", "--poll", "0.1")

    gits = wait_until(lambda: _cloning(_gits_below(doomed.pid)), timeout=60, interval=0.005,
                      what="the worker's git to clone the base")
    for pid in gits:
        os.kill(pid, signal.SIGSTOP)
        frozen.append(pid)
    (half_made,) = fleet.workspaces()
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait(timeout=30)

    wait_until(lambda: all(process_gone(pid) for pid in gits), timeout=30,
               what=f"the killed worker's git {gits} to end")
    rescuer = fleet.cli("worker", "--once", "--lease-ttl", "2", "--poll", "0.1", timeout=300)

    clean_stderr(rescuer.stderr)
    assert attempt_summary(fleet.tree(run_id)) == [(1, "LEASE_EXPIRED", "lease_expired"),
                                                   (2, "COMPLETED", None)], rescuer.stderr
    assert fleet.tree(run_id)["verdict"]["status"] == "SUCCESS"
    assert not half_made.exists() and fleet.workspaces() == []
    mounts = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    assert str(fleet.tmpdir) not in mounts
    fleet.audit_ok()
