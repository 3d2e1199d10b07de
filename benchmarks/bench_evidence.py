"""What the reviewer's evidence costs (issue 44): a fix that brings its own tests, verified with
the patch's sides each run beside the other's base, against the same run without them.

    .venv/bin/python benchmarks/bench_evidence.py [--case NAME|all] [--runs 3]

A case of tests/corpus, built as the agent met it: the base is the release with the bug and
its own tests; the patch is the released fix with the later release's tests (SWE-bench's
gold patch and test patch, together). So the patch has a test side, and agentctl runs the
check twice more: the base's code under the patch's tests (fix evidence) and the patch's code
under the base's tests (regression evidence), beside each other.
- baseline: the same run with `[verification] test_paths = []` (no test side: what agentctl
  did before), in the same home, so the base's cached results serve both;
- evidence: the default.
Each is `agentctl task submit --type bug_fix --run --agent patch:fix.diff`; the figure is the
median wall time of `--runs` rounds, taken in turn, and their ratio. Target: <= 1.3x (median
of the cases). A patch without a test side adds no run: `bench_bugfix.py` measures that one.
The verdicts are printed too: where the later release sharpened a test the base already had,
only the fix evidence shows the fix (the base's own version of that test passed).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.corpus.corpus import (  # noqa: E402
    Case,
    _files,
    _git,
    diff_after,
    is_test_file,
    load_cases,
    sdist,
    unpack,
)

AGENTCTL = str(Path(sys.executable).with_name("agentctl"))
TARGET = 1.3


def built(case: Case, root: Path) -> tuple[Path, Path]:
    """The base (the release with the bug, its own tests) and the diff that lays the released
    fix and the later release's tests over it."""
    before = unpack(sdist(case.before), root / "before")
    after = unpack(sdist(case.after), root / "after")
    repo = root / case.name
    shutil.copytree(before, repo, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"{case.before.package} {case.before.version}")
    later = {relative: path for relative, path in _files(after).items()
             if is_test_file(relative) or relative in case.fix}

    def edit(clone: Path) -> None:
        for relative, path in later.items():
            (clone / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, clone / relative)

    diff = root / "fix.diff"
    diff.write_text(diff_after(repo, root / "scratch", edit))
    return repo, diff


def run_once(case: Case, repo: Path, diff: Path, home: Path, config: Path) -> tuple[float, str]:
    """Seconds the run took and its verdict (both must be the fix's: SUCCESS)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "AGENTCTL_HOME": str(home),
           "AGENTCTL_CONFIG": str(config)}
    started = time.perf_counter()
    result = subprocess.run(
        [AGENTCTL, "task", "submit", "--repo", str(repo), "--type", "bug_fix", "--instruction",
         case.bug, "--verify", case.verify_command(sys.executable), "--run", "--agent",
         f"patch:{diff}", "--json", "--no-input"], env=env, cwd=diff.parent,
        capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if result.returncode not in (0, 1):
        raise SystemExit(f"{case.name}: agentctl exited {result.returncode}: "
                         f"{result.stderr.strip()[-400:]}")
    return took, json.loads(result.stdout)["verdict"]["status"]


def measure(case: Case, runs: int) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as scratch:
        root = Path(scratch)
        repo, diff = built(case, root)
        home = root / "home"
        plain, sides = root / "plain.toml", root / "sides.toml"
        plain.write_text("[verification]\nreruns = 0\ntest_paths = []\n")
        sides.write_text("[verification]\nreruns = 0\n")
        run_once(case, repo, diff, home, plain)  # the base's results cached for both
        without: list[float] = []
        with_sides: list[float] = []
        verdicts: dict[Path, set[str]] = {plain: set(), sides: set()}
        for _ in range(runs):
            for config, times in ((plain, without), (sides, with_sides)):
                took, verdict = run_once(case, repo, diff, home, config)
                times.append(took)
                verdicts[config].add(verdict)
        said = " / ".join(",".join(sorted(v)) for v in verdicts.values())
        return statistics.median(without), statistics.median(with_sides), said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", default="all", help="a case name of tests/corpus, or all")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cases = load_cases()
    chosen = cases if args.case == "all" else [c for c in cases if c.name == args.case]
    if not chosen:
        raise SystemExit(f"no case named {args.case!r}; expected one of "
                         + ", ".join(c.name for c in cases))
    ratios = []
    print(f"{'case':44} {'no sides':>9} {'sides':>9} {'ratio':>7}  verdicts (no sides / sides)")
    for case in chosen:
        without, with_sides, verdicts = measure(case, args.runs)
        ratios.append(with_sides / without)
        print(f"{case.name:44} {without:8.2f}s {with_sides:8.2f}s {ratios[-1]:6.2f}x  "
              + verdicts)
    median = statistics.median(ratios)
    print(f"{'median':44} {'':>9} {'':>9} {median:6.2f}x  (target <= {TARGET}x: "
          f"{'met' if median <= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
