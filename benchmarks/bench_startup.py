"""Start-up cost of the CLI beside a floor measured in the same run.

    .venv/bin/python benchmarks/bench_startup.py [--runs 7] [--home DIR] [--rebuild]

The floor is a minimal Typer app's `--help` (written to a temporary file). Beside it: `agentctl
--help`; `agentctl task list --limit 50` and `agentctl task show ID` on a home holding 10,000
tasks; and every read command on a real run of that home (a script agent's few tool calls,
verification, judge and verdict): run show, run show --tree, verdict show, verdict explain,
artifact list, events --run; and, for a command that writes, `agentctl task submit` of a task
to the repository of that run, into a home of its own (so the 10,000 stay 10,000). The home is
built once (the tasks through the domain records and
the store's unit of work, in one transaction, with the events a submit writes; the run through
the real pipeline) and reused by later runs. Each command is timed as a fresh process,
round-robin so that machine noise hits all alike; the median is reported with its ratio to the
floor and the target (help <= 1x, as issue 22 asks, every read command <= 2x).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = 10_000
FLOOR_APP = '''
import typer

app = typer.Typer(help="A minimal app: the floor.", no_args_is_help=True, add_completion=False)
task = typer.Typer(help="Tasks.", no_args_is_help=True)
app.add_typer(task, name="task")


@app.callback()
def root(home: str = typer.Option(None, help="State home.")) -> None:
    """A minimal Typer app with lazy imports."""


@task.command("list")
def list_(limit: int = typer.Option(50, help="At most this many.")) -> None:
    """List tasks."""
    import json  # lazy, as a real command would import its work

    print(json.dumps([]))


if __name__ == "__main__":
    app()
'''


def build_home(home: Path) -> str:
    """A home with TASKS valid tasks and their events; returns the id of one in the middle."""
    from agentctl.domain import ids
    from agentctl.domain.clock import utcnow
    from agentctl.domain.enums import AutonomyLevel, EventType, TaskSource, TaskStatus, TaskType
    from agentctl.domain.events import NewEvent
    from agentctl.domain.task import Task
    from agentctl.home import resolve_home
    from agentctl.store import Store

    repo = home.parent / "bench-repo"
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    types, levels = list(TaskType), list(AutonomyLevel)[:3]
    tasks: list[Task] = []
    events: list[NewEvent] = []
    for n in range(TASKS):
        now = utcnow()
        draft = Task(
            task_id=ids.new_id("task"), source=TaskSource.CLI, created_by="bench",
            task_type=types[n % len(types)], title=f"Benchmark task {n}",
            instruction=f"Benchmark task {n}: upgrade the dependency and fix the tests.",
            repository=str(repo), base_ref="main", autonomy_level=levels[n % len(levels)],
            status=TaskStatus.DRAFT, created_at=now, updated_at=now,
            labels={"bench": "startup", "n": str(n)}, allowed_paths=("src/**",),
        )
        task = draft.with_status(TaskStatus.ACCEPTED, now).with_status(TaskStatus.READY_FOR_RUN,
                                                                       now)
        tasks.append(task)
        events.append(NewEvent(type=EventType.TASK_SUBMITTED, created_at=now, task_id=task.task_id,
                               payload={"taskType": task.task_type.value,
                                        "repository": task.repository, "baseRef": "main"}))
        events.append(NewEvent(type=EventType.TASK_ACCEPTED, created_at=now, task_id=task.task_id,
                               payload={"status": task.status.value, "reason": None}))
    store = Store(resolve_home(str(home)))
    with store.unit_of_work() as uow:
        uow.tasks.add_many(tasks)
        uow.events.append_many(events)
    return tasks[TASKS // 2].task_id


def build_run(home: Path) -> str:
    """One real run on the home: a script plan of two tool calls, a check, judge, verdict."""
    from agentctl import config
    from agentctl.execution.agents.spec import parse_agent_spec
    from agentctl.home import resolve_home
    from agentctl.services.actions.requests import TaskRequest
    from agentctl.services.actions.tasks import submit_task
    from agentctl.services.attempts.pipeline import RunOptions
    from agentctl.services.lifecycle.worker import create_and_run
    from agentctl.store import Store

    repo = home.parent / "bench-run-repo"
    shutil.rmtree(repo, ignore_errors=True)  # a rebuilt home gets a fresh repository too
    repo.mkdir(parents=True)
    (repo / "app.py").write_text("VALUE = 1\n")
    identity = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run("git init -q -b main && git add -A && git commit -qm init", shell=True,
                   cwd=repo, check=True, env={**os.environ, **identity})
    plan = home.parent / "bench-plan.toml"
    plan.write_text('[[step]]\ntool = "fs.replace"\npath = "app.py"\nold = "1"\nnew = "2"\n\n'
                    '[[step]]\ntool = "shell.run"\ncommand = "python3 -c pass"\n')
    store = Store(resolve_home(str(home)))
    settings = config.defaults()
    task = submit_task(store, settings, TaskRequest(
        repository=str(repo), task_type="custom", instruction="change VALUE in app.py",
        verification_commands=("python3 -c pass",)), cwd=home.parent)
    run = create_and_run(store, settings, task.task_id, options=RunOptions(), detach=False,
                         agent=parse_agent_spec(f"script:{plan}", home.parent))
    (home / "bench-run-id").write_text(run.run_id)
    return run.run_id


def stored_task(home: Path) -> str | None:
    """The middle task's id if the home already holds exactly TASKS tasks and the run's own."""
    import sqlite3

    database = home / "agentctl.db"
    if not database.exists():
        return None
    with sqlite3.connect(database) as connection:
        ids = [row[0] for row in connection.execute("SELECT task_id FROM task ORDER BY task_id")]
    complete = len(ids) == TASKS + 1 and (home / "bench-run-id").exists()
    return ids[TASKS // 2] if complete else None


def time_once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    completed = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({completed.returncode}): {completed.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per command (median)")
    parser.add_argument("--home", type=Path, default=Path(tempfile.gettempdir())
                        / "agentctl-bench-10k" / "home", help="home with 10,000 tasks (cached)")
    parser.add_argument("--rebuild", action="store_true", help="build the home again")
    args = parser.parse_args()

    home: Path = args.home.resolve()
    if args.rebuild and home.exists():
        shutil.rmtree(home)
    task_id = stored_task(home)
    if task_id is None:
        if home.exists():
            shutil.rmtree(home)
        started = time.perf_counter()
        task_id = build_home(home)
        build_run(home)
        print(f"built {home} with {TASKS:,} tasks and a run in "
              f"{time.perf_counter() - started:.1f} s")
    run_id = (home / "bench-run-id").read_text()

    agentctl = shutil.which("agentctl", path=str(Path(sys.executable).parent)) or "agentctl"
    # a cached home may predate this agentctl's schema, and a read never migrates
    subprocess.run([agentctl, "--home", str(home), "db", "upgrade"], check=True,
                   capture_output=True)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        floor_app = workdir / "floor_app.py"
        floor_app.write_text(FLOOR_APP)
        env = {**os.environ, "AGENTCTL_HOME": str(home)}
        env.pop("AGENTCTL_CONFIG", None)
        writes = workdir / "write-home"  # made by the first submit, below (the warm-up)
        submit = [agentctl, "--home", str(writes), "task", "submit", "--repo",
                  str(home.parent / "bench-run-repo"), "--type", "custom", "--instruction",
                  "a write's start-up", "--verify", "true"]
        commands = {
            "floor: minimal Typer --help": ([sys.executable, str(floor_app), "--help"], None),
            "agentctl --help": ([agentctl, "--help"], 1.0),
            "agentctl task list --limit 50": ([agentctl, "task", "list", "--limit", "50"], 2.0),
            "agentctl task show ID": ([agentctl, "task", "show", task_id], 2.0),
            "agentctl run show RUN": ([agentctl, "run", "show", run_id], 2.0),
            "agentctl run show --tree RUN": ([agentctl, "run", "show", "--tree", run_id], 2.0),
            "agentctl verdict show RUN --json": ([agentctl, "verdict", "show", run_id,
                                                  "--json"], 2.0),
            "agentctl verdict explain RUN": ([agentctl, "verdict", "explain", run_id], 2.0),
            "agentctl artifact list RUN": ([agentctl, "artifact", "list", run_id], 2.0),
            "agentctl events --run RUN": ([agentctl, "events", "--run", run_id], 2.0),
            "agentctl task submit (a write)": (submit, None),
            "(reference) python -c 'import sqlalchemy'": (
                [sys.executable, "-c", "import sqlalchemy"], None),
        }
        for argv, _ in commands.values():  # warm the file cache and byte-code
            time_once(argv, env, workdir)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (argv, _) in commands.items():
                samples[name].append(time_once(argv, env, workdir))

    floor = statistics.median(samples["floor: minimal Typer --help"])
    floor_best = min(samples["floor: minimal Typer --help"])
    print(f"{args.runs} runs each, wall time; {os.cpu_count()} CPUs; {TASKS:,} tasks in {home}")
    print("ratio: median / floor median (the target applies to it); min ratio: min / floor min,"
          " steadier on a busy machine")
    print(f"{'command':<42} {'median':>9} {'min':>9} {'ratio':>7} {'min ratio':>10} {'target':>7}")
    failed = False
    for name, (_, target) in commands.items():
        median, best = statistics.median(samples[name]), min(samples[name])
        ratio = median / floor
        verdict = ""
        if target is not None:
            verdict = "ok" if ratio <= target else "OVER"
            failed |= ratio > target
        print(f"{name:<42} {median * 1000:>7.0f}ms {best * 1000:>7.0f}ms {ratio:>6.2f}x "
              f"{best / floor_best:>9.2f}x {f'{target:.1f}x' if target else '':>7} {verdict}")
    if failed:
        print("some commands are over their target")


if __name__ == "__main__":
    main()
