"""A real bug fix end to end, beside doing it by hand, in the same run (issue 30 targets).

    .venv/bin/python benchmarks/bench_bugfix.py [--case NAME] [--runs 5]

A case of tests/corpus (the release with the bug, the later release's tests laid on it, the
released fix as the patch; sdists from ~/.cache/agentctl-test-corpus or PyPI):
- by hand: `git clone` the base, `git apply` the fix, the case's one pytest command;
- by hand, the same evidence (for scale, no target): what agentctl's default does, done by hand
  on both cores: the fix's pytest beside the base's (a second clone), then the tests that
  failed on the base run again twice at once (that tree and a third clone), each a fresh
  process;
- agentctl: `agentctl task submit --type bug_fix --verify CMD --run --agent patch:fix.diff`
  (the default config: sandbox on, the base's checks run for the baseline),
  cold (a new state home each time: nothing cached) and warm (one home: the base's checkout
  and its baseline results cached by the first run). Targets: <= 2.5x cold, <= 2x warm.

With --phases, where each agentctl run's time went (medians), from its own record: start-up
and submit (the process started until the run existed), each group of steps, the time between
steps, and what follows the last step (clean-up, the verdict's output, the process's exit).

With --model (implies --phases and --cpu), a model of the best any implementation could do here,
for scale, no target: a process spins for agentctl's start-up until the base was resolved (the
cold runs' median from launch to the task's creation: nothing can start before the base commit
is known), then the same evidence by hand at full parallelism while a second process spins the
rest of agentctl's own CPU (the cold runs' median CPU less the same evidence's, less the
start-up): a run with no waiting, no set-up beyond that CPU, and a perfect schedule.

With --cpu, the CPU seconds each way spent (every process it started, counted by a cgroup of
its own: cpuacct on cgroup v1, cpu.stat on v2; needs root), and the wall time that CPU cannot
go below on this machine's cores: a run whose CPU over the cores is near its wall time is
bound by the work it does, not by waiting.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.corpus.corpus import build_base, diff_after, gold, load_cases  # noqa: E402

AGENTCTL = str(Path(sys.executable).with_name("agentctl"))


class CpuMeter:
    """CPU seconds spent by processes started in its cgroup, and by all they start."""

    def __init__(self, root: Path) -> None:
        self.group = root / f"agentctl-bench-bugfix-{os.getpid()}"
        self.group.mkdir()
        self._usage = self.group / ("cpuacct.usage" if root.name == "cpuacct" else "cpu.stat")

    @classmethod
    def made(cls) -> CpuMeter | None:
        """One on cgroup v1's cpuacct hierarchy, else on v2's (under this process's group);
        None where neither can be made (not root, no such hierarchy)."""
        own = Path("/proc/self/cgroup").read_text().splitlines()
        unified = next((line.partition("::")[2] for line in own if line.startswith("0::")), "")
        for root in (Path("/sys/fs/cgroup/cpuacct"),
                     Path("/sys/fs/cgroup") / unified.lstrip("/")):
            if (root / "cpuacct.usage").is_file() or (root / "cpu.stat").is_file():
                try:
                    return cls(root)
                except OSError:
                    continue
        return None

    def enter(self) -> None:
        """In the child, before it runs the command (a `preexec_fn`)."""
        (self.group / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        text = self._usage.read_text()
        if self._usage.name == "cpuacct.usage":
            return int(text) / 1e9
        return int(text.split("usage_usec")[1].split()[0]) / 1e6

    def close(self) -> None:
        for _ in range(50):  # its last processes may still be on their way out
            try:
                self.group.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def timed(argv: list[str], **options: object) -> tuple[float, datetime, datetime, str]:
    """Seconds taken, when it started and ended (UTC, to place the run's own record), and what
    it printed."""
    launched = datetime.now(UTC)
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, **options)  # type: ignore[call-overload]
    elapsed = time.perf_counter() - started
    ended = datetime.now(UTC)
    if result.returncode not in (0, 1):
        raise SystemExit(f"{argv[:3]} exited {result.returncode}: {result.stderr[-2000:]}")
    return elapsed, launched, ended, result.stdout


PHASES = ("start-up, submit, run created", "run created to first step", "workspace",
          "agent and patch collection", "verified tree (base + patch)",
          "candidate's checks", "base's checks (beside) and reruns", "report, judge, verdict",
          "between steps", "after the last step (clean-up, output, exit)")


def phases(home: Path, run_id: str, launched: datetime, ended: datetime) -> dict[str, float]:
    """Seconds per phase of the run, from its record."""
    shown = subprocess.run([AGENTCTL, "run", "show", run_id, "--tree", "--json"],
                           capture_output=True,
                           text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()),
                                           "AGENTCTL_HOME": str(home)}, check=True)
    run = json.loads(shown.stdout)
    at = datetime.fromisoformat
    steps = [step for attempt in run["attempts"] for step in attempt["steps"]]
    spent = dict.fromkeys(PHASES, 0.0)
    spent[PHASES[0]] = (at(run["createdAt"]) - launched).total_seconds()
    spent[PHASES[1]] = (at(steps[0]["startedAt"]) - at(run["createdAt"])).total_seconds()
    previous_end = at(steps[0]["startedAt"])
    applied = 0
    for step in steps:
        start, end = at(step["startedAt"]), at(step["endedAt"])
        kind, title = step["type"], step["title"]
        # the base's reruns run at once before the first of their steps opens
        gap = "base's checks (beside) and reruns" if title.startswith("baseline") \
            else "between steps"
        spent[gap] += max(0.0, (start - previous_end).total_seconds())
        previous_end = end
        if kind in ("PREPARE_WORKSPACE", "CLONE_REPOSITORY"):
            name = "workspace"
        elif kind == "APPLY_PATCH" and applied:
            name = "verified tree (base + patch)"
        elif kind in ("LOAD_CONTEXT", "APPLY_PATCH", "COLLECT_ARTIFACTS", "MODEL_PLANNING"):
            applied += kind == "APPLY_PATCH"
            name = "agent and patch collection"
        elif kind == "RUN_VERIFIER":
            name = "base's checks (beside) and reruns" if title.startswith("baseline") \
                else "candidate's checks"
        else:
            name = "report, judge, verdict"
        spent[name] += (end - start).total_seconds()
    spent[PHASES[-1]] = (ended - previous_end).total_seconds()
    return spent


def task_created(home: Path, run_id: str, launched: datetime) -> float:
    """Seconds from launch to the run's task being created: its base commit was resolved just
    before."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "AGENTCTL_HOME": str(home)}
    run = json.loads(subprocess.run([AGENTCTL, "run", "show", run_id, "--json"], env=env,
                                    capture_output=True, text=True, check=True).stdout)
    task = json.loads(subprocess.run([AGENTCTL, "task", "show", run["taskId"], "--json"],
                                     env=env, capture_output=True, text=True,
                                     check=True).stdout)
    return (datetime.fromisoformat(task["createdAt"]) - launched).total_seconds()


def spin(seconds: float) -> subprocess.Popen[bytes]:
    """A process that spends `seconds` of CPU and exits."""
    return subprocess.Popen([sys.executable, "-c", "import time\nwhile time.process_time() < "
                             f"{seconds}: pass"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="cachetools-lfu-copy-use-counts")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--phases", action="store_true", help="where each run's time went")
    parser.add_argument("--cpu", action="store_true", help="the CPU each way spent")
    parser.add_argument("--model", action="store_true",
                        help="the best schedule of the same evidence and agentctl's CPU")
    options = parser.parse_args()
    options.phases = options.phases or options.model
    options.cpu = options.cpu or options.model
    meter = CpuMeter.made() if options.cpu else None
    if options.cpu and meter is None:
        print("--cpu: no cgroup can be made here (root and cgroup v1 cpuacct or v2 needed)")
    cpu: dict[str, list[float]] = {}

    def counted() -> dict[str, object]:
        """Options for subprocess that count the process's CPU (and its children's)."""
        return {"preexec_fn": meter.enter} if meter is not None else {}

    def charge(name: str, before: float) -> None:
        if meter is not None:
            cpu.setdefault(name, []).append(meter.seconds() - before)

    def spent() -> float:
        return meter.seconds() if meter is not None else 0.0
    (case,) = [c for c in load_cases() if c.name == options.case]
    root = Path(tempfile.mkdtemp(prefix="agentctl-bench-bugfix-"))
    repo, after = build_base(case, root)
    fix = root / "fix.diff"
    fix.write_text(diff_after(repo, root / "scratch", gold(case, after)))
    command = case.verify_command(sys.executable)
    submit = [AGENTCTL, "task", "submit", "--repo", str(repo), "--type", "bug_fix",
              "--instruction", case.bug, "--verify", command, "--run", "--agent",
              f"patch:{fix}", "--json"]
    print(f"case {case.name}: {len(list(repo.rglob('*')))} paths; check: {command}")

    def by_hand(number: int) -> float:
        clone = root / f"hand-{number}"
        before = spent()
        started = time.perf_counter()
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True,
                       **counted())  # type: ignore[call-overload]
        subprocess.run(["git", "apply", str(fix)], cwd=clone, check=True,
                       **counted())  # type: ignore[call-overload]
        subprocess.run(command, shell=True, cwd=clone, capture_output=True,
                       **counted())  # type: ignore[call-overload]
        elapsed = time.perf_counter() - started
        charge("by hand (clone, apply, pytest)", before)
        shutil.rmtree(clone)
        return elapsed

    def same_evidence(number: int, *, after: float = 0.0, beside: float = 0.0) -> float:
        """`after`, `beside`: CPU seconds spun before the evidence starts, and beside it (the
        model)."""
        place = root / f"same-{number}"
        started = time.perf_counter()
        if after:
            spin(after).wait()
        spinning = spin(beside) if beside else None
        trees = [place / name for name in ("fix", "base", "rerun")]
        before = spent()
        for tree in trees:
            subprocess.run(["git", "clone", "-q", str(repo), str(tree)], check=True,
                           **counted())  # type: ignore[call-overload]
        subprocess.run(["git", "apply", str(fix)], cwd=trees[0], check=True,
                       **counted())  # type: ignore[call-overload]
        first = [subprocess.Popen(command, shell=True, cwd=tree, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True,
                                  **counted())  # type: ignore[call-overload]
                 for tree in trees[:2]]
        base_output = [process.communicate()[0] for process in first][1]
        failing = [line.split()[1] for line in base_output.splitlines()
                   if line.startswith(("FAILED ", "ERROR "))]
        if failing:
            again = command.removesuffix(" ".join(case.tests)) + " ".join(failing)
            reruns = [subprocess.Popen(again, shell=True, cwd=tree,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       **counted())  # type: ignore[call-overload]
                      for tree in trees[1:]]
            for process in reruns:
                process.wait()
        if spinning is not None:
            spinning.wait()
        elapsed = time.perf_counter() - started
        if not (after or beside):
            charge("by hand, the same evidence", before)
        shutil.rmtree(place)
        return elapsed

    spent_in: dict[str, list[dict[str, float]]] = {"agentctl cold": [], "agentctl warm": []}
    resolved_after: list[float] = []  # cold runs: launch to the task's creation (base resolved)

    def agentctl(home: Path, kind: str | None = None) -> float:
        before = spent()
        elapsed, launched, ended, printed = timed(submit, cwd=root, env={
            "PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "AGENTCTL_HOME": str(home)},
            **counted())
        if kind is not None:
            charge(kind, before)
        if options.phases and kind is not None:
            run_id = json.loads(printed)["runId"]
            spent_in[kind].append(phases(home, run_id, launched, ended))
            if kind == "agentctl cold":
                resolved_after.append(task_created(home, run_id, launched))
        return elapsed

    warm_home = root / "warm-home"
    agentctl(warm_home)  # fills the warm home's caches
    times: dict[str, list[float]] = {"by hand (clone, apply, pytest)": [],
                                     "by hand, the same evidence": [],
                                     "agentctl cold": [], "agentctl warm": []}
    for number in range(options.runs):
        times["by hand (clone, apply, pytest)"].append(by_hand(number))
        times["by hand, the same evidence"].append(same_evidence(number))
        cold = root / f"cold-home-{number}"
        times["agentctl cold"].append(agentctl(cold, "agentctl cold"))
        shutil.rmtree(cold, ignore_errors=True)
        times["agentctl warm"].append(agentctl(warm_home, "agentctl warm"))
    baseline = statistics.median(times["by hand (clone, apply, pytest)"])
    targets = {"agentctl cold": 2.5, "agentctl warm": 2.0}
    print(f"a real bug fix end to end (median of {options.runs})")
    for name, samples in times.items():
        median = statistics.median(samples)
        goal = f"   target <= {targets[name]:.1f}x" if name in targets else ""
        print(f"  {name:<32} {median:7.3f} s  {median / baseline:5.2f}x{goal}   "
              f"[{', '.join(f'{s:.2f}' for s in samples)}]")
    hand = times["by hand (clone, apply, pytest)"]
    for name, limit in targets.items():  # each run beside the by-hand one just before it
        ratios = [mine / theirs for mine, theirs in zip(times[name], hand, strict=True)]
        print(f"  {name} interleaved: {sum(r <= limit for r in ratios)}/{len(ratios)} within "
              f"{limit:.1f}x   [{', '.join(f'{r:.2f}' for r in ratios)}]")
    same = times["by hand, the same evidence"]
    ratios = [mine / theirs for mine, theirs in zip(times["agentctl cold"], same, strict=True)]
    print(f"  agentctl cold / the same evidence by hand, interleaved: median "
          f"{statistics.median(ratios):.2f}x   [{', '.join(f'{r:.2f}' for r in ratios)}]")
    if options.phases:
        print(f"where agentctl's time went (median seconds of {options.runs})")
        print(f"  {'phase':<46} {'cold':>7} {'warm':>7}")
        for name in PHASES:
            cold_s, warm_s = (statistics.median(s[name] for s in spent_in[kind])
                              for kind in ("agentctl cold", "agentctl warm"))
            print(f"  {name:<46} {cold_s:7.3f} {warm_s:7.3f}")
    if options.model and meter is not None:
        start_up = statistics.median(resolved_after)
        rest = max(0.0, statistics.median(cpu["agentctl cold"])
                   - statistics.median(cpu["by hand, the same evidence"]) - start_up)
        modelled = [same_evidence(options.runs + n, after=start_up, beside=rest)
                    for n in range(options.runs)]
        median = statistics.median(modelled)
        print(f"a model of the best schedule (median of {options.runs}): {start_up:.3f} s of "
              f"start-up until the base is known, then the same evidence by hand beside "
              f"{rest:.3f} s of agentctl's other CPU")
        print(f"  {'modelled':<32} {median:7.3f} s  {median / baseline:5.2f}x   "
              f"[{', '.join(f'{s:.2f}' for s in modelled)}]")
        packed = start_up + (statistics.median(cpu["by hand, the same evidence"]) + rest) \
            / (os.cpu_count() or 1)
        print(f"  {'start-up, then that CPU packed':<32} {packed:7.3f} s  "
              f"{packed / baseline:5.2f}x   (no waiting at all, every core busy throughout)")
    if meter is not None:
        cores = os.cpu_count() or 1
        hand_cpu = statistics.median(cpu["by hand (clone, apply, pytest)"])
        print(f"the CPU each way spent (median seconds of {options.runs}, every process it "
              f"started), and the wall it cannot go below on {cores} cores")
        for name, samples in cpu.items():
            median = statistics.median(samples)
            print(f"  {name:<32} cpu {median:7.3f} s  {median / hand_cpu:5.2f}x   "
                  f"cpu / cores {median / cores:6.3f} s = {median / cores / baseline:4.2f}x "
                  f"by hand's wall")
        meter.close()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
