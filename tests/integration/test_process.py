"""run_to_file on real subprocesses: exit codes, output to a file, process groups killed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from agentctl.execution.process import run_to_file
from tests.support.processes import group_is_gone

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def run(command, tmp_path: Path, **options):
    options.setdefault("timeout", 30)
    options.setdefault("env", ENV)
    output = tmp_path / "out.log"
    return run_to_file(command, cwd=options.pop("cwd", tmp_path), output=output, **options), output



def first_line_pid(output: Path) -> int:
    return int(output.read_text().splitlines()[0])


def test_exit_code_of_a_shell_command_is_returned(tmp_path: Path) -> None:
    result, _ = run("exit 3", tmp_path)
    assert (result.exit_code, result.timed_out, result.cancelled) == (3, False, False)


def test_argv_command_runs_without_a_shell(tmp_path: Path) -> None:
    result, output = run(["echo", "$HOME", "a;b"], tmp_path)
    assert result.exit_code == 0
    assert output.read_text() == "$HOME a;b\n"


def test_stdout_and_stderr_both_land_in_the_output_file(tmp_path: Path) -> None:
    result, output = run("echo to-stdout; echo to-stderr >&2", tmp_path)
    assert output.read_text().splitlines() == ["to-stdout", "to-stderr"]
    assert result.output_bytes == output.stat().st_size


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    result, output = run("echo $$; (sleep 30; touch late) & sleep 30; touch late", tmp_path,
                         timeout=0.5)
    assert result.timed_out and not result.cancelled
    assert not (tmp_path / "late").exists()
    assert result.exit_code is not None and result.exit_code < 0
    assert group_is_gone(first_line_pid(output))


def test_children_ignoring_sigterm_are_killed_after_the_grace_period(tmp_path: Path) -> None:
    result, output = run("trap '' TERM; echo $$; sleep 30 & sleep 30; touch late", tmp_path,
                         timeout=0.3)
    assert result.timed_out
    assert not (tmp_path / "late").exists()
    assert group_is_gone(first_line_pid(output))


def test_background_child_left_after_a_normal_exit_is_killed(tmp_path: Path) -> None:
    result, output = run("echo $$; (sleep 30; touch late) &", tmp_path)
    assert result.exit_code == 0 and not result.timed_out
    assert not (tmp_path / "late").exists()
    assert group_is_gone(first_line_pid(output))


def test_should_stop_cancels_the_whole_group(tmp_path: Path) -> None:
    stop_at = time.monotonic() + 0.3
    result, output = run("echo $$; sleep 30; touch late", tmp_path,
                         should_stop=lambda: time.monotonic() > stop_at)
    assert result.cancelled and not result.timed_out
    assert not (tmp_path / "late").exists()
    assert group_is_gone(first_line_pid(output))


def test_command_not_found_exits_127_with_a_message_in_the_output(tmp_path: Path) -> None:
    result, output = run(["agentctl-no-such-command"], tmp_path)
    assert result.exit_code == 127
    assert "agentctl-no-such-command: command not found" in output.read_text()


def test_command_not_found_through_the_shell_exits_127(tmp_path: Path) -> None:
    result, output = run("agentctl-no-such-command --flag", tmp_path)
    assert result.exit_code == 127
    assert "not found" in output.read_text()


def test_missing_working_directory_means_not_started(tmp_path: Path) -> None:
    result, output = run(["true"], tmp_path, cwd=tmp_path / "gone")
    assert result.exit_code is None
    assert "does not exist" in output.read_text()
    assert result.output_bytes > 0


def test_environment_is_exactly_what_was_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTCTL_TEST_LEAK", "should-not-be-seen")
    result, output = run(["env"], tmp_path, env={**ENV, "ONLY_THIS": "yes"})
    assert result.exit_code == 0
    seen = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert seen == {**ENV, "ONLY_THIS": "yes"}


def test_large_output_goes_to_the_file_with_the_right_size(tmp_path: Path) -> None:
    size = 50 * 1024 * 1024
    result, output = run(f"head -c {size} /dev/zero", tmp_path)
    assert result.exit_code == 0
    assert result.output_bytes == size == output.stat().st_size


def test_stdin_bytes_reach_the_child(tmp_path: Path) -> None:
    result, output = run(["cat"], tmp_path, stdin=b"from stdin\n")
    assert result.exit_code == 0
    assert output.read_bytes() == b"from stdin\n"


def test_without_stdin_the_child_reads_end_of_file(tmp_path: Path) -> None:
    result, output = run(["cat"], tmp_path, timeout=5)
    assert result.exit_code == 0 and not result.timed_out
    assert output.read_bytes() == b""


def test_append_keeps_what_the_output_file_already_held(tmp_path: Path) -> None:
    (tmp_path / "out.log").write_text("first\n")
    run(["echo", "second"], tmp_path, append=True)
    assert (tmp_path / "out.log").read_text() == "first\nsecond\n"


def test_killed_by_a_signal_is_a_negative_exit_code(tmp_path: Path) -> None:
    result, _ = run("kill -9 $$", tmp_path)
    assert result.exit_code == -9


def test_an_exception_from_should_stop_still_kills_the_group(tmp_path: Path) -> None:
    def should_stop() -> bool:
        if (tmp_path / "out.log").read_text().strip():
            raise KeyboardInterrupt
        return False

    with pytest.raises(KeyboardInterrupt):
        run("echo $$; sleep 30", tmp_path, should_stop=should_stop)
    assert group_is_gone(first_line_pid(tmp_path / "out.log"))


def test_a_flood_is_cut_at_the_output_bound(tmp_path: Path) -> None:
    result, output = run([sys.executable, "-c", FLOOD], tmp_path, max_output_bytes=1_000_000)
    assert result.output_exceeded and result.exit_code == -9
    assert result.output_bytes == output.stat().st_size == 1_000_000


FLOOD = "import sys\nwhile True:\n    sys.stdout.buffer.write(b'x' * 65536)"
# The leader puts its command in a session of its own (as bubblewrap's --new-session does),
# writes the command's pid, and waits: killing the leader's group leaves the command running.
SESSION_LEADER = """
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()
    os.execvp(sys.argv[2], sys.argv[2:])
open(sys.argv[1], "w").write(str(pid))
time.sleep(60)
"""


class OwnSession:
    """A Confiner that, like the sandbox, runs the command out of reach of the leader's group
    and kills it only as the block ends (the sandbox's cgroup kill), once it has written more."""

    def __init__(self, output: Path) -> None:
        self.output = output

    @contextlib.contextmanager
    def confined(self, argv: Sequence[str], env: Mapping[str, str],
                 cwd: Path) -> Iterator[tuple[list[str], dict[str, str]]]:
        pidfile = cwd / "command.pid"
        yield [sys.executable, "-c", SESSION_LEADER, str(pidfile), *argv], dict(env)
        size, deadline = self.output.stat().st_size, time.monotonic() + 30
        while self.output.stat().st_size == size and time.monotonic() < deadline:
            time.sleep(0.01)  # until the command, which outlived its leader, writes again
        pid = int(pidfile.read_text())
        os.kill(pid, signal.SIGKILL)
        assert process_is_gone(pid)

    def launch(self, argv: list[str],
               start: Callable[[list[str]], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        return start(argv)


def process_is_gone(pid: int, within: float = 5.0) -> bool:
    """Gone, or a zombie (its files are closed): an orphan's reaper may be slow or absent."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.01)
    return False


def test_a_flood_that_outlives_its_leader_is_cut_only_once_the_confinement_killed_it(
        tmp_path: Path) -> None:
    output = tmp_path / "out.log"
    result, _ = run([sys.executable, "-c", FLOOD], tmp_path, max_output_bytes=1_000_000,
                    confine=OwnSession(output))
    assert result.output_exceeded
    assert result.output_bytes == output.stat().st_size == 1_000_000
