"""Helpers for the worker end-to-end tests: real `agentctl worker` processes on one state home.

A `Fleet` is a `Bench` (home, working folder, config, plans) plus what worker tests need besides:
worker processes started in their own process group (so a test can SIGKILL, SIGSTOP or SIGTERM
them like an operator or a crash would), a private TMPDIR (so the workspaces a run leaves behind
can be counted), and an `outside` folder beyond every workspace for the state that scripted
agents and verifiers keep across attempts (pid files, markers, counters).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tests.conftest import GIT_IDENTITY, make_repo
from tests.e2e.runs_support import Bench

T = TypeVar("T")

# An agent's long step: appends its pid to `pids`, then sleeps as long as its call number says
# (`hang.py STATE FIRST LATER`: FIRST seconds on the first call, LATER on every later one), so
# attempt 1 hangs while the next attempt goes straight through.
HANG_AGENT = '''\
import os, sys, time
from pathlib import Path

state, first, later = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
with open(state / "pids", "a") as pids:
    pids.write(f"{os.getpid()}\\n")
calls = len((state / "pids").read_text().split())
time.sleep(first if calls == 1 else later)
'''

# A verification command: counts its calls in COUNTER and, for the first FAILURES of them, fails
# the way a flaky network does (`flaky.py COUNTER FAILURES MESSAGE`).
FLAKY_VERIFIER = '''\
import sys
from pathlib import Path

counter, failures, message = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
count = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(count))
if count <= failures:
    print(f"call {count}: {message}")
    sys.exit(1)
print(f"call {count}: all good")
'''

WORKER_ID = re.compile(r"worker (\S+) started")
DONE = re.compile(r"worker \S+ done: (\d+) attempt")
IDLE = re.compile(r"worker \S+ idle: ")


def wait_until(condition: Callable[[], T], *, timeout: float, what: str,
               interval: float = 0.05) -> T:
    """Poll `condition` until it returns something truthy; fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def process_gone(pid: int) -> bool:
    """No such process, or only its zombie is left (it exited; its parent has not reaped it)."""
    return _state(pid) in (None, "Z", "X")


def _state(pid: int) -> str | None:
    """The process's state letter from /proc (R, S, T, Z, ...); None if there is no such pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rpartition(")")[2].split()[0]


@dataclass
class Worker:
    """An `agentctl worker` process, leader of its own process group."""

    process: subprocess.Popen[bytes]
    stderr_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def worker_id(self) -> str:
        """The id the worker announced on stderr when it started."""
        match = wait_until(lambda: WORKER_ID.search(self.stderr()), timeout=30,
                           what="the worker to announce its id")
        return match.group(1)

    def idles(self) -> int:
        """How many times the worker has said it ran out of work."""
        return len(IDLE.findall(self.stderr()))

    def wait_idle(self, *, more_than: int = 0, timeout: float = 60) -> None:
        """Until the worker says it ran out of work (once more than `more_than` times): all
        it did before is on record, and it waits for work rather than exiting. Fails naming
        the worker's stderr if it exits first, or after `timeout` (a hang guard)."""
        wait_until(lambda: self.idles() > more_than or self.process.poll() is not None,
                   timeout=timeout, what="the worker to go idle")
        assert self.idles() > more_than, (f"the worker exited ({self.process.returncode}) "
                                          f"instead of going idle: {self.stderr()}")

    def attempts_done(self) -> int:
        match = DONE.search(self.stderr())
        assert match is not None, self.stderr()
        return int(match.group(1))

    def signal_group(self, signum: signal.Signals) -> None:
        os.killpg(self.pid, signum)

    def wait(self, timeout: float) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"worker {self.pid} still running after {timeout:g} s:\n"
                                 f"{self.stderr()}") from None

    def stop(self) -> None:
        """Teardown: take the whole group down, whatever state it is in."""
        if self.process.poll() is None:
            for signum in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.killpg(self.pid, signum)
                except ProcessLookupError:
                    pass
            self.process.wait(timeout=30)


@dataclass
class Fleet:
    """A Bench with worker processes, a private TMPDIR and a folder outside every workspace."""

    bench: Bench
    executable: str
    repo: Path = field(init=False)
    tmpdir: Path = field(init=False)
    outside: Path = field(init=False)
    workers: list[Worker] = field(default_factory=list)

    def __post_init__(self) -> None:
        root = self.bench.root
        self.tmpdir = root / "tmp"
        self.outside = root / "outside"
        self.tmpdir.mkdir(parents=True, exist_ok=True)
        self.outside.mkdir(parents=True, exist_ok=True)
        self.repo = make_repo(root / "service", {
            "README.md": "# service\n", "src/app.py": "VALUE = 1\n"})

    # --- environment and processes ------------------------------------------------------------
    def env(self) -> dict[str, str]:
        """What every agentctl process of the fleet gets: its home, its TMPDIR, a git identity."""
        environment = {**os.environ, "AGENTCTL_HOME": str(self.bench.home),
                       "TMPDIR": str(self.tmpdir), **GIT_IDENTITY}
        environment.pop("AGENTCTL_CONFIG", None)
        return environment

    def cli(self, *args: str, expect: Sequence[int] | None = (0,), timeout: float = 120) -> Any:
        """A CLI call in the fleet's home and TMPDIR (returns the conftest `Result`)."""
        return self.bench.cli(*args, expect=expect, env={"TMPDIR": str(self.tmpdir)},
                              timeout=timeout)

    def json(self, *args: str) -> Any:
        return self.cli(*args, "--json").json()

    def start_worker(self, *args: str) -> Worker:
        """`agentctl worker ARGS` in the background, in a new session (own process group)."""
        return self.start_process("worker", *args)

    def start_process(self, *args: str) -> Worker:
        """`agentctl ARGS` in the background, in a new session (own process group); an inline
        `run start` is a worker too."""
        stderr_path = self.bench.root / f"process-{len(self.workers) + 1}.stderr"
        with open(stderr_path, "wb") as stderr:
            process = subprocess.Popen(
                [self.executable, *args], cwd=self.bench.cwd, env=self.env(),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                start_new_session=True)
        worker = Worker(process, stderr_path)
        self.workers.append(worker)
        return worker

    def freeze(self, worker: Worker) -> None:
        """SIGSTOP the worker's group, at a moment it holds no write lock on the database.

        A process frozen inside a write transaction would stall every other writer (SQLite has
        one write lock): thaw it and try again until the freeze lands between transactions.
        """
        for _ in range(100):
            worker.signal_group(signal.SIGSTOP)
            wait_until(lambda: _state(worker.pid) in ("T", "t"), timeout=10,
                       what="the worker to stop")
            probe = sqlite3.connect(self.bench.home / "agentctl.db", timeout=0,
                                    isolation_level=None)
            try:
                probe.execute("BEGIN IMMEDIATE")
                probe.execute("ROLLBACK")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise
            finally:
                probe.close()
            worker.signal_group(signal.SIGCONT)
            time.sleep(0.02)
        raise AssertionError("could not freeze the worker between two transactions")

    def stop_everything(self) -> None:
        """Teardown: every worker group, and every agent process a script recorded."""
        for worker in self.workers:
            worker.stop()
        for pid in self.agent_pids():
            if self._is_ours(pid):  # a pid that exited long ago may belong to someone else now
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def _is_ours(self, pid: int) -> bool:
        try:
            command_line = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            return False
        return str(self.outside).encode() in command_line

    # --- configuration, tasks and runs --------------------------------------------------------
    def configure(self, *, max_attempts: int = 2, verify: Sequence[str] = ("true",),
                  backoff: float = 0, lease_ttl: float = 2) -> None:
        """`.agentctl.toml`: short leases (for the tests that wait one out; the others pass a
        long one, which a loaded machine's late heartbeat cannot outlast), quick polls, `verify`
        as the verification plan.

        Unsandboxed: these tests watch the agent's host pids and keep a verifier's call count
        outside the workspace across attempts, both of which the sandbox forbids by design
        (tests/pipeline/test_sandbox.py covers the sandboxed equivalents)."""
        commands = ", ".join(f"'{command}'" for command in verify)
        self.bench.config(
            "[sandbox]\n"
            "mode = \"off\"\n"
            "[budget]\n"
            f"max_attempts = {max_attempts}\n"
            f"backoff_initial_seconds = {backoff}\n"
            "[worker]\n"
            f"lease_ttl_seconds = {lease_ttl}\n"
            "poll_seconds = 0.1\n"
            "[verification]\n"
            f"commands = [{commands}]\n"
            # each attempt runs the (counting) verifier once: no reruns, no baseline
            'baseline = "never"\nreruns = 0\n')

    def script(self, name: str, text: str) -> Path:
        path = self.outside / name
        path.write_text(text)
        return path

    def hanging_plan(self, *, first: float, later: float) -> str:
        """A plan that writes a file (so there is a patch) and then runs the hanging agent
        step: `first` seconds on its first call, `later` seconds on every later call."""
        plan = self.bench.plan(
            "hang.toml",
            {"tool": "fs.write", "path": "NOTES.md", "content": "notes\n"},
            {"tool": "shell.run", "timeout": 120,
             "command": self.hanging_command(first=first, later=later)},
        )
        return f"script:{plan}"

    def writing_plan(self) -> str:
        plan = self.bench.plan(
            "write.toml", {"tool": "fs.write", "path": "NOTES.md", "content": "notes\n"})
        return f"script:{plan}"

    def flaky_verifier(self, *, failures: int, message: str = "fatal: repository timeout"
                       ) -> tuple[str, Path]:
        """A verification command failing `failures` times with `message`; its call counter."""
        script = self.script("flaky.py", FLAKY_VERIFIER)
        counter = self.outside / "verifier-calls"
        return f'python3 {script} {counter} {failures} "{message}"', counter

    def submit(self) -> str:
        return self.bench.submit(self.repo, env={"TMPDIR": str(self.tmpdir)})

    def queue(self, task_id: str, agent: str = "noop") -> str:
        """`run start --detach`: a QUEUED run's id."""
        document = self.json("run", "start", task_id, "--agent", agent, "--detach")
        assert document["status"] == "QUEUED", document
        return str(document["runId"])

    def queue_many(self, task_id: str, count: int, agent: str = "noop") -> list[str]:
        """`count` × `run start --detach --json`, through the CLI's entry point in ONE Python
        process: forty interpreter starts would cost forty seconds of CPU before a worker runs.
        """
        program = (
            "import contextlib, io, json, sys\n"
            "from agentctl.cli.main import main\n"
            "ids = []\n"
            f"for _ in range({count}):\n"
            "    out = io.StringIO()\n"
            "    with contextlib.redirect_stdout(out):\n"
            "        try:\n"
            f"            main(['run', 'start', {task_id!r}, '--agent', {agent!r}, '--detach',"
            " '--json'])\n"
            "        except SystemExit as done:\n"
            "            assert done.code in (0, None), done.code\n"
            "    ids.append(json.loads(out.getvalue())['runId'])\n"
            "print(json.dumps(ids))\n"
        )
        python = Path(self.executable).with_name("python")
        completed = subprocess.run(
            [str(python if python.exists() else sys.executable), "-c", program],
            cwd=self.bench.cwd, env=self.env(), capture_output=True, text=True, timeout=300)
        assert completed.returncode == 0, completed.stderr
        assert "Traceback" not in completed.stderr, completed.stderr
        ids = [str(run_id) for run_id in json.loads(completed.stdout)]
        assert len(set(ids)) == count
        return ids

    # --- reading state ------------------------------------------------------------------------
    def tree(self, run_id: str) -> dict[str, Any]:
        return dict(self.json("run", "show", run_id, "--tree"))

    def events(self, run_id: str | None = None) -> list[dict[str, Any]]:
        return list(self.json("events", *(("--run", run_id) if run_id else ())))

    def audit_ok(self) -> None:
        result = self.cli("audit", "verify")
        assert result.stdout.startswith("ok"), result.stdout

    def status(self, run_id: str) -> str | None:
        """The run's status straight from the database (cheap enough to poll)."""
        rows = self.query("SELECT status FROM run WHERE run_id = ?", run_id)
        return str(rows[0][0]) if rows else None

    def query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        for _ in range(50):  # a read-only reader can meet a checkpoint in progress
            try:
                return self.bench.query(sql, *params)
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise
                time.sleep(0.05)
        return self.bench.query(sql, *params)

    def heartbeats(self, run_id: str, count: int, *, timeout: float = 60) -> None:
        """Wait until the run's live attempt has recorded `count` more heartbeats: its worker
        is seen keeping the lease, an event rather than a stretch of clock."""
        sql = ("SELECT last_heartbeat_at FROM attempt WHERE run_id = ? "
               "ORDER BY attempt_number DESC LIMIT 1")
        seen = {row[0] for row in self.query(sql, run_id)}
        wait_until(lambda: seen.update(row[0] for row in self.query(sql, run_id))
                   or len(seen) > count, timeout=timeout,
                   what=f"{count} heartbeats of run {run_id}'s attempt")

    def agent_pids(self) -> list[int]:
        pids = self.outside / "pids"
        return [int(pid) for pid in pids.read_text().split()] if pids.exists() else []

    def wait_for_agent(self, calls: int = 1, *, run_id: str, timeout: float = 60,
                       status: str = "RUNNING_AGENT") -> int:
        """Wait until the hanging script has been called `calls` times (the run is then in
        `status`: RUNNING_AGENT for an agent step, VERIFYING for a verifier); its pid."""
        pids = wait_until(lambda: len(self.agent_pids()) >= calls and self.agent_pids(),
                          timeout=timeout, what=f"hanging script call {calls}")
        assert self.status(run_id) == status, self.status(run_id)
        return pids[calls - 1]

    def hanging_command(self, *, first: float, later: float) -> str:
        hang = self.script("hang.py", HANG_AGENT)
        return f"python3 {hang} {self.outside} {first:g} {later:g}"

    def workspaces(self) -> list[Path]:
        """Workspaces currently on disk (agentctl makes them in TMPDIR)."""
        return sorted(self.tmpdir.glob("agentctl-ws-*"))


def attempt_summary(tree: Mapping[str, Any]) -> list[tuple[int, str, str | None]]:
    return [(a["attemptNumber"], a["status"], a["failureCode"]) for a in tree["attempts"]]


def event_types(events: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(event["type"]) for event in events]


def clean_stderr(stderr: str) -> None:
    """A worker's stderr after a normal life: no traceback, no lock error, no internal error."""
    assert "Traceback" not in stderr, stderr
    assert "database is locked" not in stderr, stderr
    assert "internal error" not in stderr, stderr


@contextmanager
def fleet_at(root: Path, run_agentctl: Callable[..., Any], executable: str) -> Iterator[Fleet]:
    """A Fleet in `root`, every process it started stopped afterwards, pass or fail."""
    fleet = Fleet(Bench(root, run_agentctl), executable)
    try:
        yield fleet
    finally:
        fleet.stop_everything()
