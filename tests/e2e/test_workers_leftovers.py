"""Nothing left behind by kill -9: the directories of a killed attempt are removed when its lease
is reclaimed or when the next worker starts (by what the store records, not by their names),
and a run whose foreground `run start` died is ended by the next command that looks at it."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from agentctl.execution.workspaces import overlay
from tests.e2e.workers_support import Fleet, Worker, attempt_summary, clean_stderr, wait_until
from tests.machine import unavailable

TTL = ("--lease-ttl", "2")


def _killed_mid_agent(fleet: Fleet, doomed: Worker, run_id: str) -> Path:
    """SIGKILL the process executing `run_id` and its agent; the attempt's directory it left."""
    agent_pid = fleet.wait_for_agent(run_id=run_id)
    (directory,) = fleet.workspaces()
    doomed.signal_group(signal.SIGKILL)
    doomed.wait(timeout=10)
    os.kill(agent_pid, signal.SIGKILL)  # its own session: a crash would take it down too
    return directory


def test_a_killed_workers_attempt_directory_is_removed_when_its_lease_is_reclaimed(
        fleet: Fleet) -> None:
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=30, later=0))
    left = _killed_mid_agent(fleet, fleet.start_worker(*TTL), run_id)
    assert left.is_dir()

    rescuer = fleet.cli("worker", "--once", *TTL, "--poll", "0.1")

    clean_stderr(rescuer.stderr)
    assert attempt_summary(fleet.tree(run_id)) == [(1, "LEASE_EXPIRED", "lease_expired"),
                                                   (2, "COMPLETED", None)]
    assert not left.exists()
    assert fleet.workspaces() == []


def test_a_worker_starting_removes_the_directories_of_attempts_reclaimed_elsewhere(
        fleet: Fleet) -> None:
    """The lease was reclaimed on another machine (here: a mount namespace that does not see
    this TMPDIR), so the directory outlived the reclaim; the next worker here removes it, and
    leaves a folder of the same name pattern that no attempt owns."""
    fleet.configure(max_attempts=1)
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=30, later=0))
    left = _killed_mid_agent(fleet, fleet.start_worker(*TTL), run_id)
    foreign = fleet.tmpdir / "agentctl-ws-not-an-attempt"
    foreign.mkdir()
    wait_until(lambda: fleet.query("SELECT 1 FROM attempt WHERE lease_expires_at < "
                                   "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"),
               timeout=10, what="the lease to expire")
    elsewhere = subprocess.run(
        ["unshare", "--mount", "sh", "-c", 'mount -t tmpfs tmpfs "$TMPDIR" && exec "$@"', "-",
         fleet.executable, "run", "show", run_id], env=fleet.env(), cwd=fleet.bench.cwd,
        capture_output=True, text=True, timeout=60)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert fleet.status(run_id) == "FAILED" and left.is_dir()

    worker = fleet.cli("worker", "--once", *TTL, "--poll", "0.1")

    assert "removed 1 directories of attempts that had ended" in worker.stderr
    assert not left.exists()
    assert fleet.workspaces() == [foreign]


def _mounted_under(folder: Path, pid: int | str = "self") -> list[str]:
    """Mount points at or below `folder` in the mount table `pid` sees."""
    table = Path(f"/proc/{pid}/mountinfo").read_text(encoding="utf-8", errors="replace")
    points = [line.split(" ", 5)[4] for line in table.splitlines()]
    return [point for point in points if point == str(folder)
            or point.startswith(f"{folder}/")]


def test_a_killed_workers_views_end_with_it_and_the_next_worker_leaves_no_mount_behind(
        fleet: Fleet) -> None:
    """The views of an attempt are mounted where only its worker (and what the worker starts)
    sees them: killed with -9, the worker leaves no mount on the machine for anyone to sweep."""
    if not overlay.supported(fleet.tmpdir):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")
    tmpdir = fleet.tmpdir.resolve()
    run_id = fleet.queue(fleet.submit(), fleet.hanging_plan(first=30, later=0))
    doomed = fleet.start_worker(*TTL)
    agent_pid = fleet.wait_for_agent(run_id=run_id)
    (directory,) = fleet.workspaces()
    root = directory.resolve()
    assert sorted(_mounted_under(tmpdir, doomed.pid)) == [str(root / "layers" / "objects"),
                                                          str(root / "repo")]
    assert _mounted_under(tmpdir) == []  # the worker's view, in its namespace alone

    doomed.signal_group(signal.SIGKILL)
    doomed.wait(timeout=10)
    os.kill(agent_pid, signal.SIGKILL)
    assert _mounted_under(tmpdir) == []
    rescuer = fleet.cli("worker", "--once", *TTL, "--poll", "0.1")

    clean_stderr(rescuer.stderr)
    assert attempt_summary(fleet.tree(run_id)) == [(1, "LEASE_EXPIRED", "lease_expired"),
                                                   (2, "COMPLETED", None)]
    assert _mounted_under(tmpdir) == []
    assert fleet.workspaces() == []


@pytest.mark.parametrize("command", ["run show", "run list", "run start"])
def test_a_run_whose_foreground_run_start_was_killed_is_ended_by_the_next_command(
        fleet: Fleet, command: str) -> None:
    fleet.configure(max_attempts=1)
    task_id = fleet.submit()
    doomed = fleet.start_process("run", "start", task_id, "--agent",
                                 fleet.hanging_plan(first=30, later=0))
    wait_until(lambda: fleet.query("SELECT run_id FROM run"), timeout=30,
               what="the inline run to be created")
    run_id = str(fleet.query("SELECT run_id FROM run")[0][0])
    left = _killed_mid_agent(fleet, doomed, run_id)
    wait_until(lambda: fleet.query("SELECT 1 FROM attempt WHERE lease_expires_at < "
                                   "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"),
               timeout=10, what="the lease to expire")
    assert fleet.status(run_id) == "RUNNING_AGENT"

    if command == "run show":
        shown = fleet.json("run", "show", run_id)
        assert shown["status"] == "FAILED"
    elif command == "run list":
        listed = fleet.json("run", "list")
        assert [(run["runId"], run["status"]) for run in listed] == [(run_id, "FAILED")]
    else:
        fleet.queue(task_id)

    assert fleet.status(run_id) == "FAILED"
    tree = fleet.tree(run_id)
    assert tree["verdict"]["status"] == "FAILED_INFRASTRUCTURE"
    assert attempt_summary(tree) == [(1, "LEASE_EXPIRED", "lease_expired")]
    assert tree["attempts"][0]["endReason"] == "worker lease expired on attempt 1"
    assert not left.exists()
