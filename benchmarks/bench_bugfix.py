"""A real bug fix end to end, beside doing it by hand, in the same run (issue 30 targets).

    .venv/bin/python benchmarks/bench_bugfix.py [--case NAME|all] [--runs 5]

A case of tests/corpus (the release with the bug, the later release's tests laid on it, the
released fix as the patch; sdists from ~/.cache/agentctl-test-corpus or PyPI):
- by hand: `git clone` the base, `git apply` the fix, the case's one pytest command;
- by hand, the same evidence (for scale, no target): what agentctl's default does, done by hand
  on both cores: the fix's pytest beside the base's (a second clone), the base's pytest
  rerunning each test that fails there twice at once in its own process (agentctl's report
  plugin, as agentctl runs it), then those it could not rerun there (subtests under xdist)
  twice at once in processes of their own (that tree and a third clone);
- agentctl: `agentctl task submit --type bug_fix --verify CMD --run --agent patch:fix.diff`
  (the default config: sandbox on, the base's checks run for the baseline),
  cold (a new state home each time: nothing cached) and warm (one home: the base's checkout
  and its baseline results cached by the first run). Targets: <= 2.5x cold, <= 2x warm.

With --reruns N, agentctl runs under `[verification] reruns = N` and the same evidence by hand
reruns the base's failures N times, so what the flake guard costs is seen beside the default's
(2): 0 is the floor the issue names, one clone and two test runs.

With --case all, every case of the corpus in turn, each measured as one case is (its own
repository, fix and warm home, --runs rounds), then one table: a line per case, and the median
of each column with how many cases meet each target. The ratios depend on the case (how heavy
its tests are, how many fail on the base), so a figure for one case is not the figure. --phases,
--cpu and --model measure a single case and are refused with --case all.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from path_taken import from_home  # noqa: E402

from agentctl.config.schema import VerificationSettings  # noqa: E402
from agentctl.execution.verification.test_reports import (  # noqa: E402
    ReportDir,
    injected_env,
    read_pytest_run,
    reran_in_process,
    with_lifted_pythonpath,
)
from tests.corpus.corpus import Case, build_base, diff_after, gold, load_cases  # noqa: E402

AGENTCTL = str(Path(sys.executable).with_name("agentctl"))
DEFAULT_RERUNS = VerificationSettings().reruns


def home_env(home: Path, config: Path | None = None) -> dict[str, str]:
    """What agentctl is run with here: a plain PATH, the state `home`, and `config` if given
    (else the user's, as a user has it)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "AGENTCTL_HOME": str(home)}
    if config is not None:
        env["AGENTCTL_CONFIG"] = str(config)
    return env


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
                           capture_output=True, text=True, env=home_env(home), check=True)
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
    env = home_env(home)
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


HAND = "by hand (clone, apply, pytest)"
SAME = "by hand, the same evidence"
COLD = "agentctl cold"
WARM = "agentctl warm"
TARGETS = {COLD: 2.5, WARM: 2.0}
EVERY_CASE = "all"


@dataclass(frozen=True)
class Model:
    """The best schedule of the same evidence beside agentctl's own CPU (--model)."""

    start_up: float               # the cold runs' median from launch until the base was known
    rest: float                   # agentctl's other CPU, spun beside the evidence
    modelled: tuple[float, ...]   # seconds per round
    packed: float                 # the start-up, then all that CPU over every core


@dataclass(frozen=True)
class Figures:
    """One case measured. Samples are in round order: the same index is the same round, which
    the interleaved ratios pair up."""

    case: str
    runs: int
    times: Mapping[str, tuple[float, ...]]                  # HAND, SAME, COLD, WARM
    phases: Mapping[str, tuple[Mapping[str, float], ...]]   # COLD, WARM; empty without --phases
    cpu: Mapping[str, tuple[float, ...]]                    # the ways counted; empty without one
    model: Model | None

    def median(self, way: str) -> float:
        return statistics.median(self.times[way])

    def ratio(self, way: str) -> float:
        """The way's median over by hand's."""
        return self.median(way) / self.median(HAND)

    def interleaved(self, way: str, beside: str = HAND) -> list[float]:
        """Each round's run of `way` over the run of `beside` just before it."""
        return [mine / theirs
                for mine, theirs in zip(self.times[way], self.times[beside], strict=True)]


class CaseBench:
    """One case's repository, fix and check, built once in a folder of its own, and each way
    of doing the fix on them."""

    def __init__(self, case: Case, meter: CpuMeter | None, *, with_phases: bool,
                 reruns: int | None = None) -> None:
        self.case, self.meter, self.with_phases = case, meter, with_phases
        self.root = Path(tempfile.mkdtemp(prefix="agentctl-bench-bugfix-"))
        self.reruns = DEFAULT_RERUNS if reruns is None else reruns
        self.config: Path | None = None  # the default config, as a user has it
        if reruns is not None:
            self.config = self.root / "reruns.toml"
            self.config.write_text(f"[verification]\nreruns = {reruns}\n")
        self.repo, after = build_base(case, self.root)
        self.fix = self.root / "fix.diff"
        self.fix.write_text(diff_after(self.repo, self.root / "scratch", gold(case, after)))
        self.command = case.verify_command(sys.executable)
        self.submit = [AGENTCTL, "task", "submit", "--repo", str(self.repo), "--type", "bug_fix",
                       "--instruction", case.bug, "--verify", self.command, "--run", "--agent",
                       f"patch:{self.fix}", "--json"]
        self.cpu: dict[str, list[float]] = {}
        self.spent_in: dict[str, list[dict[str, float]]] = {COLD: [], WARM: []}
        self.resolved_after: list[float] = []  # cold runs: launch to the task's creation

    def header(self) -> str:
        return (f"case {self.case.name}: {len(list(self.repo.rglob('*')))} paths; "
                f"reruns: {self.reruns}; check: {self.command}")

    def measure(self, runs: int, *, model: bool) -> Figures:
        """`runs` rounds of each way after one run that fills the warm home; the folder is
        removed after."""
        try:
            warm_home = self.root / "warm-home"
            self._agentctl(warm_home)  # fills the warm home's caches
            print(from_home(warm_home), flush=True)
            times: dict[str, list[float]] = {HAND: [], SAME: [], COLD: [], WARM: []}
            for number in range(runs):
                times[HAND].append(self._by_hand(number))
                times[SAME].append(self._same_evidence(number))
                cold = self.root / f"cold-home-{number}"
                times[COLD].append(self._agentctl(cold, COLD))
                shutil.rmtree(cold, ignore_errors=True)
                times[WARM].append(self._agentctl(warm_home, WARM))
            modelled = self._model(runs) if model and self.meter is not None else None
            return Figures(
                self.case.name, runs, {way: tuple(s) for way, s in times.items()},
                {way: tuple(s) for way, s in self.spent_in.items()} if self.with_phases else {},
                {way: tuple(s) for way, s in self.cpu.items()}, modelled)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def _counted(self) -> dict[str, object]:
        """Options for subprocess that count the process's CPU (and its children's)."""
        return {"preexec_fn": self.meter.enter} if self.meter is not None else {}

    def _spent(self) -> float:
        return self.meter.seconds() if self.meter is not None else 0.0

    def _charge(self, way: str, before: float) -> None:
        if self.meter is not None:
            self.cpu.setdefault(way, []).append(self.meter.seconds() - before)

    def _apply(self, tree: Path) -> None:
        """`git apply` of the fix, without its warnings about the whitespace the fix adds (some
        cases' tests hold trailing blanks): applied as is either way."""
        subprocess.run(["git", "apply", "--whitespace=nowarn", str(self.fix)], cwd=tree,
                       check=True, **self._counted())  # type: ignore[call-overload]

    def _by_hand(self, number: int) -> float:
        clone = self.root / f"hand-{number}"
        before = self._spent()
        started = time.perf_counter()
        subprocess.run(["git", "clone", "-q", str(self.repo), str(clone)], check=True,
                       **self._counted())  # type: ignore[call-overload]
        self._apply(clone)
        subprocess.run(self.command, shell=True, cwd=clone, capture_output=True,
                       **self._counted())  # type: ignore[call-overload]
        elapsed = time.perf_counter() - started
        self._charge(HAND, before)
        shutil.rmtree(clone)
        return elapsed

    def _same_evidence(self, number: int, *, after: float = 0.0, beside: float = 0.0) -> float:
        """`after`, `beside`: CPU seconds spun before the evidence starts, and beside it (the
        model)."""
        place = self.root / f"same-{number}"
        started = time.perf_counter()
        if after:
            spin(after).wait()
        spinning = spin(beside) if beside else None
        trees = [place / "fix", place / "base"]
        before = self._spent()
        for tree in trees:
            subprocess.run(["git", "clone", "-q", str(self.repo), str(tree)], check=True,
                           **self._counted())  # type: ignore[call-overload]
        self._apply(trees[0])
        base_command, base_env = self._rerunning_failures(place / "reports")
        runs = [subprocess.Popen(command, shell=True, cwd=tree, env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 **self._counted())  # type: ignore[call-overload]
                for tree, command, env in ((trees[0], self.command, None),
                                           (trees[1], base_command, base_env))]
        for process in runs:
            process.wait()
        left = self._not_rerun(ReportDir(place / "reports"))
        if left and self.reruns:  # rerun at once in processes of their own, the later in clones
            for number in range(2, self.reruns + 1):
                trees.append(place / f"rerun-{number}")
                subprocess.run(["git", "clone", "-q", str(self.repo), str(trees[-1])],
                               check=True, **self._counted())  # type: ignore[call-overload]
            again = self.command.removesuffix(" ".join(self.case.tests)) + " ".join(left)
            reruns = [subprocess.Popen(again, shell=True, cwd=tree,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       **self._counted())  # type: ignore[call-overload]
                      for tree in trees[1:]]
            for process in reruns:
                process.wait()
        if spinning is not None:
            spinning.wait()
        elapsed = time.perf_counter() - started
        if not (after or beside):
            self._charge(SAME, before)
        shutil.rmtree(place)
        return elapsed

    def _rerunning_failures(self, reports: Path) -> tuple[str, dict[str, str]]:
        """The base's command and environment with its report plugin rerunning each failing
        test `reruns` times in the same process, as agentctl runs it."""
        command, env = with_lifted_pythonpath(self.command, os.environ)
        report_dir = ReportDir(reports)
        report_dir.prepare()
        return command, injected_env(env, report_dir, rerun_failures=self.reruns)

    @staticmethod
    def _not_rerun(reports: ReportDir) -> list[str]:
        """The base's failing tests its pytest did not rerun in process (subtests under xdist)."""
        run = read_pytest_run(reports.pytest_json)
        reran = reran_in_process(reports, run)
        return [r.test_id for r in run.results if r.failed and r.test_id not in reran]

    def _agentctl(self, home: Path, way: str | None = None) -> float:
        before = self._spent()
        elapsed, launched, ended, printed = timed(
            self.submit, cwd=self.root, env=home_env(home, self.config),
            **self._counted())
        verdict = json.loads(printed).get("verdict") or {}
        if not str(verdict.get("status", "")).startswith("SUCCESS"):  # a failed run's time
            sys.exit(f"agentctl did not verify the fix ({verdict.get('status')}): "
                     f"{'; '.join(verdict.get('reasons', []))}")
        if way is not None:
            self._charge(way, before)
        if self.with_phases and way is not None:
            run_id = json.loads(printed)["runId"]
            self.spent_in[way].append(phases(home, run_id, launched, ended))
            if way == COLD:
                self.resolved_after.append(task_created(home, run_id, launched))
        return elapsed

    def _model(self, runs: int) -> Model:
        start_up = statistics.median(self.resolved_after)
        evidence = statistics.median(self.cpu[SAME])
        rest = max(0.0, statistics.median(self.cpu[COLD]) - evidence - start_up)
        modelled = tuple(self._same_evidence(runs + n, after=start_up, beside=rest)
                         for n in range(runs))
        packed = start_up + (evidence + rest) / (os.cpu_count() or 1)
        return Model(start_up, rest, modelled, packed)


def samples(values: Iterable[float]) -> str:
    return ", ".join(f"{value:.2f}" for value in values)


def report_case(figures: Figures) -> None:
    """One case's figures, line for line as this benchmark has always printed them."""
    runs, baseline = figures.runs, figures.median(HAND)
    print(f"a real bug fix end to end (median of {runs})")
    for name, taken in figures.times.items():
        median = statistics.median(taken)
        goal = f"   target <= {TARGETS[name]:.1f}x" if name in TARGETS else ""
        print(f"  {name:<32} {median:7.3f} s  {median / baseline:5.2f}x{goal}   "
              f"[{samples(taken)}]")
    for name, limit in TARGETS.items():
        ratios = figures.interleaved(name)
        print(f"  {name} interleaved: {sum(r <= limit for r in ratios)}/{len(ratios)} within "
              f"{limit:.1f}x   [{samples(ratios)}]")
    ratios = figures.interleaved(COLD, SAME)
    print(f"  agentctl cold / the same evidence by hand, interleaved: median "
          f"{statistics.median(ratios):.2f}x   [{samples(ratios)}]")
    if figures.phases:
        print(f"where agentctl's time went (median seconds of {runs})")
        print(f"  {'phase':<46} {'cold':>7} {'warm':>7}")
        for name in PHASES:
            cold_s, warm_s = (statistics.median(s[name] for s in figures.phases[way])
                              for way in (COLD, WARM))
            print(f"  {name:<46} {cold_s:7.3f} {warm_s:7.3f}")
    if figures.model is not None:
        model = figures.model
        median = statistics.median(model.modelled)
        print(f"a model of the best schedule (median of {runs}): {model.start_up:.3f} s of "
              f"start-up until the base is known, then the same evidence by hand beside "
              f"{model.rest:.3f} s of agentctl's other CPU")
        print(f"  {'modelled':<32} {median:7.3f} s  {median / baseline:5.2f}x   "
              f"[{samples(model.modelled)}]")
        print(f"  {'start-up, then that CPU packed':<32} {model.packed:7.3f} s  "
              f"{model.packed / baseline:5.2f}x   (no waiting at all, every core busy throughout)")
    if figures.cpu:
        cores = os.cpu_count() or 1
        hand_cpu = statistics.median(figures.cpu[HAND])
        print(f"the CPU each way spent (median seconds of {runs}, every process it "
              f"started), and the wall it cannot go below on {cores} cores")
        for name, spent in figures.cpu.items():
            median = statistics.median(spent)
            print(f"  {name:<32} cpu {median:7.3f} s  {median / hand_cpu:5.2f}x   "
                  f"cpu / cores {median / cores:6.3f} s = {median / cores / baseline:4.2f}x "
                  f"by hand's wall")


def report_sweep(every: list[Figures]) -> None:
    """One line per case, then the median of each column and how many cases meet each target
    (a case meets one when its median ratio does)."""
    total = f"median of {len(every)} cases"
    width = max(len(label) for label in [total, *(f.case for f in every)])
    # by hand (s), then x by hand: the same evidence, cold, warm; cold over the same evidence
    rows = [(f.median(HAND), f.ratio(SAME), f.ratio(COLD), f.ratio(WARM),
             statistics.median(f.interleaved(COLD, SAME))) for f in every]
    cold_met = [row[2] <= TARGETS[COLD] for row in rows]
    warm_met = [row[3] <= TARGETS[WARM] for row in rows]

    def line(label: str, row: tuple[float, ...], cold_ok: str, warm_ok: str) -> str:
        hand, same, cold, warm, beside = row
        return (f"  {label:<{width}}{hand:8.3f}{same:6.2f}x{cold:6.2f}x{warm:6.2f}x"
                f"{beside:9.2f}x{cold_ok:>7}{warm_ok:>6}")

    def met(flag: bool) -> str:
        return "yes" if flag else "no"
    print(f"every case of tests/corpus end to end (median of {every[0].runs} each), "
          f"x: over by hand")
    print(f"  {'case':<{width}}{'hand s':>8}{'same':>7}{'cold':>7}{'warm':>7}{'cold/same':>10}"
          f"{'<=2.5x':>7}{'<=2x':>6}")
    for figures, row, cold_ok, warm_ok in zip(every, rows, cold_met, warm_met, strict=True):
        print(line(figures.case, row, met(cold_ok), met(warm_ok)))
    medians = tuple(statistics.median(column) for column in zip(*rows, strict=True))
    print(line(total, medians, f"{sum(cold_met)}/{len(rows)}", f"{sum(warm_met)}/{len(rows)}"))
    print("  hand s: by hand (clone, apply, pytest); same: by hand, the same evidence;")
    print("  cold, warm: agentctl; cold/same: agentctl cold over the same evidence, interleaved;")
    print("  <=2.5x, <=2x: whether agentctl cold, warm meets its target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="cachetools-lfu-copy-use-counts",
                        help=f"a case of tests/corpus, or {EVERY_CASE!r}: each in turn, and a "
                             "table of them")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reruns", type=int, metavar="N",
                        help=f"[verification] reruns for agentctl and by hand (default: the "
                             f"config's, {DEFAULT_RERUNS})")
    parser.add_argument("--phases", action="store_true", help="where each run's time went")
    parser.add_argument("--cpu", action="store_true", help="the CPU each way spent")
    parser.add_argument("--model", action="store_true",
                        help="the best schedule of the same evidence and agentctl's CPU")
    options = parser.parse_args()

    def refuse(message: str) -> NoReturn:
        parser.exit(2, f"{parser.prog}: error: {message}\n")
    cases = load_cases()
    known = [case.name for case in cases]
    if options.case != EVERY_CASE and options.case not in known:
        refuse(f"argument --case: no case {options.case!r}; expected {EVERY_CASE} or one of "
               f"{', '.join(known)}")
    if options.case == EVERY_CASE and (options.phases or options.cpu or options.model):
        refuse(f"--phases, --cpu and --model measure one case; with --case {EVERY_CASE} "
               "expected none of them")
    if options.runs < 1:
        refuse(f"argument --runs: {options.runs}; expected 1 or more")
    if options.reruns is not None and options.reruns < 0:
        refuse(f"argument --reruns: {options.reruns}; expected 0 or more")
    options.phases = options.phases or options.model
    options.cpu = options.cpu or options.model
    meter = CpuMeter.made() if options.cpu else None
    if options.cpu and meter is None:
        print("--cpu: no cgroup can be made here (root and cgroup v1 cpuacct or v2 needed)")
    every: list[Figures] = []
    try:
        for case in cases:
            if options.case in (EVERY_CASE, case.name):
                bench = CaseBench(case, meter, with_phases=options.phases,
                                  reruns=options.reruns)
                print(bench.header(), flush=True)
                every.append(bench.measure(options.runs, model=options.model))
    finally:
        if meter is not None:
            meter.close()
    if options.case == EVERY_CASE:
        report_sweep(every)
    else:
        report_case(every[0])


if __name__ == "__main__":
    main()
