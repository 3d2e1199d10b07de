"""A noop run on a 200,000-file repository (a one-file patch, `true` as its check) beside one
plain `git clone` of it, in the same run (issue 30 targets).

    .venv/bin/python benchmarks/bench_monorepo.py [--runs 3] [--files 200000]

The repository (200,000 files of a few lines in 2,000 folders two levels deep, 5 commits) is
generated once with `git fast-import` and cached (see --dir; ~1 GB on disk with a checkout).
Each round times, in alternating order and each after a `sync` (every tree kept until the end:
~1 GB per clone and per cold home):
- `git clone` of it into a fresh folder (the baseline);
- agentctl cold: `agentctl task submit --run --agent patch:one-file.diff --verify true` with a
  new state home (an empty tree cache: the base is checked out into it first);
- agentctl warm: the same with a home whose cache holds the base already.
Targets: cold <= 1.5x the clone, warm <= 3 s.
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
from collections.abc import Callable
from pathlib import Path

from generated_repo import Shape, cached_repository

AGENTCTL = str(Path(sys.executable).with_name("agentctl"))
COLD_RATIO = 1.5
WARM_SECONDS = 3.0
EDITED = "area00/pkg00/mod_000000.py"


def nested_path(index: int) -> str:
    """100 files per folder, 100 folders per area, the areas at the top."""
    return f"area{index // 10_000:02d}/pkg{index // 100 % 100:02d}/mod_{index:06d}.py"


def one_file_patch(repo: Path, out: Path) -> None:
    """A diff that appends a line to one file of `main`, made in a throw-away index."""
    index = out.with_suffix(".index")
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}

    def git(*args: str, stdin: bytes | None = None) -> bytes:
        return subprocess.run(["git", "-C", str(repo), *args], input=stdin, env=env, check=True,
                              capture_output=True).stdout

    git("read-tree", "main")
    text = git("cat-file", "blob", f"main:{EDITED}") + b"# edited by the benchmark\n"
    blob = git("hash-object", "-w", "--stdin", stdin=text).decode().strip()
    git("update-index", "--cacheinfo", f"100644,{blob},{EDITED}")
    out.write_bytes(git("diff", "--cached", "main"))
    index.unlink()


def remove(path: Path) -> None:
    """The benchmark's folder: clones and state homes (a cache's files are read-only; views
    are unmounted already: they live in each run's own mount namespace)."""
    if path.exists():
        subprocess.run(["chmod", "-R", "u+w", str(path)], check=True)
        shutil.rmtree(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "agentctl-bench")
    options = parser.parse_args()
    shape = Shape(options.files, commits=5, touched=25, lines=(1, 3), path=nested_path)
    source = cached_repository(options.dir, f"monorepo-{options.files}", shape)
    work = Path(tempfile.mkdtemp(prefix="monorepo-", dir=options.dir))
    try:
        measure(source, work, files=options.files, commits=shape.commits, runs=options.runs)
    finally:
        remove(work)


def measure(source: Path, work: Path, *, files: int, commits: int, runs: int) -> None:
    """Time the clone and the runs, round after round, and print them beside each other."""
    patch = work / "one-file.diff"
    one_file_patch(source, patch)
    submit = [AGENTCTL, "task", "submit", "--repo", str(source), "--base", "main",
              "--type", "custom", "--instruction", "append a line to one file",
              "--verify", "true", "--run", "--agent", f"patch:{patch}", "--json"]
    warm_home = work / "warm-home"
    print(f"repository: {files} files, {commits} commits, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, {source}")

    def agentctl(home: Path) -> Callable[[], None]:
        def run() -> None:
            result = subprocess.run(submit, cwd=work, capture_output=True, text=True,
                                    env={"PATH": os.environ["PATH"], "HOME": str(Path.home()),
                                         "AGENTCTL_HOME": str(home)})
            if result.returncode != 0:
                raise SystemExit(f"agentctl exited {result.returncode}: {result.stderr[-2000:]}"
                                 f"{result.stdout[-2000:]}")
        return run

    agentctl(warm_home)()  # fills the warm home's cache
    clones = cold_homes = 0

    def clone() -> None:
        nonlocal clones
        clones += 1
        subprocess.run(["git", "clone", "-q", str(source), str(work / f"clone-{clones}")],
                       check=True)

    def cold() -> None:
        nonlocal cold_homes
        cold_homes += 1
        agentctl(work / f"cold-home-{cold_homes}")()

    candidates: dict[str, Callable[[], None]] = {
        "git clone (baseline)": clone,
        "agentctl cold (empty tree cache)": cold,
        "agentctl warm (base cached)": agentctl(warm_home),
    }
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for number in range(runs):
        # Nothing is deleted until the end: on a journal-less ext4 (as here) creating files
        # within a minute of deleting many is several times slower, and would fall on whichever
        # candidate came next.
        order = list(candidates.items())
        for name, action in order if number % 2 == 0 else order[::-1]:
            os.sync()  # none pays for another's writeback
            started = time.perf_counter()
            action()
            times[name].append(time.perf_counter() - started)
    load = os.getloadavg()
    baseline = statistics.median(times["git clone (baseline)"])
    print(f"a noop run with a one-file patch and `true` as its check (median of {runs}, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
    goals = {"agentctl cold (empty tree cache)": f"target <= {COLD_RATIO:.1f}x",
             "agentctl warm (base cached)": f"target <= {WARM_SECONDS:.1f} s"}
    for name, samples in times.items():
        median = statistics.median(samples)
        goal = f"   {goals[name]}" if name in goals else ""
        print(f"  {name:<34} {median:7.3f} s  {median / baseline:5.2f}x{goal}   "
              f"[{', '.join(f'{s:.2f}' for s in samples)}]")


if __name__ == "__main__":
    main()
