"""The installed `agentctl` leaves without the interpreter's teardown but with everything that
teardown did that matters: exit codes, complete output, the database's WAL checkpointed, a
run's workspace gone from its path (deleted in the background). Real command, real SQLite."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result, make_repo


def test_a_write_leaves_the_database_checkpointed_and_its_output_whole(
        agentctl: Callable[..., Result], home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", {"calc.py": "x = 1\n"})

    submitted = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                         "--instruction", "fix " + "the thing " * 700, "--json")

    assert submitted.returncode == 0, submitted.stderr
    assert submitted.json()["taskId"].startswith("task_")  # type: ignore[index]
    wal = home / "agentctl.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0


def test_exit_codes_and_the_one_line_error_come_through(
        agentctl: Callable[..., Result]) -> None:
    missing = agentctl("run", "show", "run_nope")

    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "run_nope" in missing.stderr


def test_a_runs_workspace_is_gone_when_the_command_returns(
        agentctl: Callable[..., Result], tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", {"calc.py": "x = 1\n"})
    scratch = tmp_path / "tmp"
    scratch.mkdir()

    ran = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                   "--instruction", "nothing to do", "--verify", "true", "--run",
                   "--agent", "noop", "--no-input", env={"TMPDIR": str(scratch)})

    assert ran.returncode in (0, 1), ran.stderr
    assert list(scratch.glob("agentctl-ws-*")) == []


PROBE = ("import atexit, gc, sys\n"
         "atexit.register(lambda: print(gc.get_threshold(), gc.get_freeze_count()))\n"
         "sys.argv = ['agentctl', *sys.argv[1:]]\n"
         "from agentctl.cli.main import command\n"
         "command()\n")


def collector_after(*args: str, cwd: Path, env: dict[str, str] | None = None,
                    ) -> tuple[tuple[int, int, int], int]:
    """The installed entry point's garbage collector as the command leaves it: thresholds and
    how many objects were frozen."""
    import os
    import subprocess
    import sys

    environment = {**os.environ, **(env or {})}
    environment.pop("AGENTCTL_CONFIG", None)
    if "AGENTCTL_PLAIN" not in (env or {}):
        environment.pop("AGENTCTL_PLAIN", None)
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, env=environment, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    thresholds, frozen = done.stdout.strip().splitlines()[-1].rsplit(" ", 1)
    return eval(thresholds), int(frozen)  # noqa: S307 - a tuple the probe printed


def test_a_command_starts_without_collecting_cyclic_garbage(tmp_path: Path) -> None:
    """Its start-up's objects live as long as it does: the entry point raises the youngest
    generation's threshold (CPython's 700) so that making them sets off no collection; a
    command that does no long work leaves it there, nothing frozen."""
    from agentctl._speedups.process import GC_YOUNG_THRESHOLD

    thresholds, frozen = collector_after("--help", cwd=tmp_path)

    assert thresholds == (GC_YOUNG_THRESHOLD, 10, 10) and GC_YOUNG_THRESHOLD > 700
    assert frozen == 0


def test_agentctl_plain_leaves_the_collector_at_pythons_pace_and_nothing_frozen(
        home: Path, tmp_path: Path) -> None:
    """The off switch of the speed-ups: neither the start-up's pace nor the run's freeze."""
    repo = make_repo(tmp_path / "calc", {"calc.py": "x = 1\n"})

    thresholds, frozen = collector_after(
        "task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction", "nothing",
        "--verify", "true", "--run", "--agent", "noop", "--no-input", cwd=tmp_path,
        env={"AGENTCTL_HOME": str(home), "AGENTCTL_PLAIN": "1"})

    assert (thresholds, frozen) == ((700, 10, 10), 0)


def test_a_run_freezes_its_start_up_and_collects_at_pythons_pace_after(
        home: Path, tmp_path: Path) -> None:
    """A run (hours of an agent's tool calls, maybe) is long work: once it starts, what the
    start-up made is frozen out of later collections and the thresholds are CPython's again."""
    repo = make_repo(tmp_path / "calc", {"calc.py": "x = 1\n"})

    thresholds, frozen = collector_after(
        "task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction", "nothing",
        "--verify", "true", "--run", "--agent", "noop", "--no-input", cwd=tmp_path,
        env={"AGENTCTL_HOME": str(home)})

    assert thresholds == (700, 10, 10)
    assert frozen > 10_000  # the modules and classes of the start-up, at least


def test_a_worker_freezes_its_start_up_too(home: Path, tmp_path: Path) -> None:
    """A worker runs for days: the same once it starts, even with nothing queued."""
    thresholds, frozen = collector_after("worker", "--once", cwd=tmp_path,
                                         env={"AGENTCTL_HOME": str(home)})

    assert thresholds == (700, 10, 10)
    assert frozen > 10_000
