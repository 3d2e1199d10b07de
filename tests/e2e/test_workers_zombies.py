"""A long-lived worker gathers no zombies: orphans it adopts (it is a subreaper) are reaped when
they exit, whatever their process group, and so are its own background deleters. A real
`agentctl worker` running several runs whose verifier leaves an orphan in a session of its own
that exits at once."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.workers_support import Fleet, wait_until

RUNS = 4


def _zombie_children(pid: int) -> list[str]:
    """Each zombie child of `pid` as "pid (name)"."""
    zombies = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields[0] == "Z" and int(fields[1]) == pid:
            zombies.append(stat[:stat.rfind(")") + 1])
    return zombies


def test_a_worker_has_no_zombie_children_after_runs_that_leave_orphans(fleet: Fleet) -> None:
    # The verifier's subshell ends at once: its child, in a session of its own, is adopted by
    # the worker (a subreaper) and exits there.
    fleet.configure(max_attempts=1, verify=("(setsid true &); sleep 0.2",))
    task_id = fleet.submit()
    runs = [fleet.queue(task_id, fleet.writing_plan()) for _ in range(RUNS)]
    worker = fleet.start_worker("--lease-ttl", "10", "--poll", "0.1")

    wait_until(lambda: all(fleet.status(run) == "COMPLETED" for run in runs), timeout=240,
               what=f"{RUNS} runs to complete")
    wait_until(lambda: f"{runs[-1]}: COMPLETED" in worker.stderr(), timeout=60,
               what="the worker to finish its last run")

    # idle, the worker collects its own finished deleters too (of the last run's directory)
    try:
        wait_until(lambda: not _zombie_children(worker.pid), timeout=30,
                   what="the idle worker to have no zombie child")
    except AssertionError:
        assert _zombie_children(worker.pid) == []
        raise
    assert worker.process.poll() is None, worker.stderr()
