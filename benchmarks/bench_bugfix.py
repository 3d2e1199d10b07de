"""A real bug fix end to end, beside doing it by hand, in the same run (issue 30 targets).

    .venv/bin/python benchmarks/bench_bugfix.py [--case NAME] [--runs 5]

A case of tests/corpus (the release with the bug, the later release's tests laid on it, the
released fix as the patch; sdists from ~/.cache/agentctl-test-corpus or PyPI):
- by hand: `git clone` the base, `git apply` the fix, the case's one pytest command;
- agentctl: `agentctl task submit --type bug_fix --verify CMD --run --agent patch:fix.diff`
  (the default config: sandbox on, the base's checks run for the baseline),
  cold (a new state home each time: nothing cached) and warm (one home: the base's checkout
  and its baseline results cached by the first run). Targets: <= 2.5x cold, <= 2x warm.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.corpus.corpus import build_base, diff_after, gold, load_cases  # noqa: E402

AGENTCTL = str(Path(sys.executable).with_name("agentctl"))


def timed(argv: list[str], **options: object) -> float:
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, **options)  # type: ignore[call-overload]
    elapsed = time.perf_counter() - started
    if result.returncode not in (0, 1):
        raise SystemExit(f"{argv[:3]} exited {result.returncode}: {result.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="cachetools-lfu-copy-use-counts")
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
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
        started = time.perf_counter()
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
        subprocess.run(["git", "apply", str(fix)], cwd=clone, check=True)
        subprocess.run(command, shell=True, cwd=clone, capture_output=True)
        elapsed = time.perf_counter() - started
        shutil.rmtree(clone)
        return elapsed

    def agentctl(home: Path) -> float:
        return timed(submit, cwd=root, env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()),
                                            "AGENTCTL_HOME": str(home)})

    warm_home = root / "warm-home"
    agentctl(warm_home)  # fills the warm home's caches
    times: dict[str, list[float]] = {"by hand (clone, apply, pytest)": [],
                                     "agentctl cold": [], "agentctl warm": []}
    for number in range(options.runs):
        times["by hand (clone, apply, pytest)"].append(by_hand(number))
        cold = root / f"cold-home-{number}"
        times["agentctl cold"].append(agentctl(cold))
        shutil.rmtree(cold, ignore_errors=True)
        times["agentctl warm"].append(agentctl(warm_home))
    baseline = statistics.median(times["by hand (clone, apply, pytest)"])
    targets = {"agentctl cold": 2.5, "agentctl warm": 2.0}
    print(f"a real bug fix end to end (median of {options.runs})")
    for name, samples in times.items():
        median = statistics.median(samples)
        goal = f"   target <= {targets[name]:.1f}x" if name in targets else ""
        print(f"  {name:<32} {median:7.3f} s  {median / baseline:5.2f}x{goal}   "
              f"[{', '.join(f'{s:.2f}' for s in samples)}]")
    subprocess.run(["umount", "-R", "-q", str(root)], capture_output=True)
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
