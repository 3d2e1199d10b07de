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


def test_the_command_collects_cyclic_garbage_less_often_than_pythons_default() -> None:
    """Its start-up's objects live as long as it does: the entry point raises the youngest
    generation's threshold (CPython's 700) so that their creation sets off few collections."""
    import subprocess
    import sys

    from agentctl.cli.main import GC_YOUNG_THRESHOLD

    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print(gc.get_threshold()))\n"
             "sys.argv = ['agentctl', '--help']\n"
             "from agentctl.cli.main import command\n"
             "command()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)

    young, middle, old = eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - a tuple we print
    assert young == GC_YOUNG_THRESHOLD > 700
    assert (middle, old) == (10, 10)  # the older generations as CPython has them
