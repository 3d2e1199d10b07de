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

Every agentctl command is timed twice, side by side: with the speed-ups (`agentctl/_speedups`)
and plain (`AGENTCTL_PLAIN=1`, all of them off); the targets apply to both. Where
PYTHONDONTWRITEBYTECODE is set (some containers), no bytecode and no dataclass code table is ever
kept, so the commands are timed without it and the script says so (--keep-environment keeps it).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = 10_000
PLAIN = "AGENTCTL_PLAIN"  # the switch that turns every speed-up off
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
    from agentctl.store.storage import Store

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
    from agentctl.store.storage import Store

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


def measure(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds, and the CPU seconds (user + system) the command's processes used: the
    steadier figure on a machine others load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({completed.returncode}): {completed.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per command (median)")
    parser.add_argument("--home", type=Path, default=Path(tempfile.gettempdir())
                        / "agentctl-bench-10k" / "home", help="home with 10,000 tasks (cached)")
    parser.add_argument("--rebuild", action="store_true", help="build the home again")
    parser.add_argument("--keep-environment", action="store_true",
                        help="time with PYTHONDONTWRITEBYTECODE as it is set here")
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
        env.pop(PLAIN, None)
        no_bytecode = "PYTHONDONTWRITEBYTECODE" in env
        if no_bytecode and not args.keep_environment:
            env.pop("PYTHONDONTWRITEBYTECODE")
        writes = workdir / "write-home"  # made by the first submit, below (the warm-up)
        submit = [agentctl, "--home", str(writes), "task", "submit", "--repo",
                  str(home.parent / "bench-run-repo"), "--type", "custom", "--instruction",
                  "a write's start-up", "--verify", "true"]
        floor = [sys.executable, str(floor_app), "--help"]
        commands = {
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
        }
        plain = {**env, PLAIN: "1"}
        # (name, argv, environment): the floor, each command with and without the speed-ups,
        # and a reference
        timed = [("floor", floor, env),
                 *((f"{name}|on", argv, env) for name, (argv, _) in commands.items()),
                 *((f"{name}|plain", argv, plain) for name, (argv, _) in commands.items()),
                 ("sqlalchemy", [sys.executable, "-c", "import sqlalchemy"], env)]
        for _, argv, environment in timed:  # warm the file cache and byte-code
            measure(argv, environment, workdir)
        samples: dict[str, list[float]] = {name: [] for name, _, _ in timed}
        cpu: dict[str, list[float]] = {name: [] for name, _, _ in timed}
        for _ in range(args.runs):
            for name, argv, environment in timed:
                wall, used = measure(argv, environment, workdir)
                samples[name].append(wall)
                cpu[name].append(used)

    floor_median = statistics.median(samples["floor"])
    floor_best = min(samples["floor"])
    print(f"{args.runs} runs each, wall time; {os.cpu_count()} CPUs; {TASKS:,} tasks in {home}")
    if no_bytecode:
        print("PYTHONDONTWRITEBYTECODE is set here: " + (
            "kept, as asked (no bytecode, no dataclass code table)" if args.keep_environment
            else "timed without it (--keep-environment to keep it)"))
    print(f"floor, a minimal Typer app's --help: median {floor_median * 1000:.0f} ms, "
          f"min {floor_best * 1000:.0f} ms, CPU {statistics.median(cpu['floor']) * 1000:.0f} ms")
    print("ratio: median / floor median (the target applies to it); min ratio: min / floor "
          "min; cpu: median CPU (user + system) of the command, the steadiest on a busy "
          f"machine; plain: {PLAIN}=1, every speed-up off")
    print(f"{'command':<30} {'target':>6} | {'speed-ups: median':>17} {'ratio':>6} "
          f"{'min ratio':>9} {'cpu':>6} | {'plain: median':>13} {'ratio':>6} {'min ratio':>9} "
          f"{'cpu':>6}")
    over: list[str] = []
    for name, (_, target) in commands.items():
        row = f"{name.removeprefix('agentctl '):<30} {f'{target:.1f}x' if target else '':>6}"
        for mode, width in (("on", 17), ("plain", 13)):
            times = samples[f"{name}|{mode}"]
            ratio = statistics.median(times) / floor_median
            if target is not None and ratio > target:
                over.append(f"{name} ({mode})")
            used = statistics.median(cpu[f"{name}|{mode}"])
            row += (f" | {statistics.median(times) * 1000:>{width - 2}.0f}ms {ratio:>5.2f}x "
                    f"{min(times) / floor_best:>8.2f}x {used * 1000:>4.0f}ms")
        print(row + (" OVER" if any(o.startswith(f"{name} (") for o in over) else ""))
    print(f"(reference) python -c 'import sqlalchemy': "
          f"{statistics.median(samples['sqlalchemy']) * 1000:.0f} ms")
    if over:
        print("over their target: " + ", ".join(over))


if __name__ == "__main__":
    main()
