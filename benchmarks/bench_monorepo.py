"""A noop run on a 200,000-file repository (a one-file patch, `true` as its check) beside one
plain `git clone` of it, in the same run (issue 30 targets).

    .venv/bin/python benchmarks/bench_monorepo.py [--runs 3] [--files 200000] [--pause 2]

The repository (200,000 files of a few lines in 2,000 folders two levels deep, 5 commits) is
generated once with `git fast-import` and cached (see --dir; ~1 GB on disk with a checkout).
Timed, each after a `sync` and a pause (--pause seconds: the disk's writeback and discards of
what came before settle, and none pays for another's):
- `git clone` of it into a fresh folder (the baseline);
- agentctl cold: `agentctl task submit --run --agent patch:one-file.diff --verify true` with a
  new state home (an empty tree cache: the base is checked out into it first);
- agentctl warm: the same with a home whose cache holds the base already.

Writing 200,000 files on this kind of shared disk takes anywhere from 2 to 30 s from one minute
to the next, so a median of each candidate's times compares moments, not the candidates. Each
round is clone, cold, cold, clone (the reverse in odd rounds), and the cold figure is the median
of the ratios of each cold run to the clone right beside it (two pairs a round, every run in one
pair): the disk's state is shared by the two runs compared, and drift within a round falls on
both orders alike. Warm is timed once a round, at its end. Every tree is kept until the end
(~1 GB per clone and per cold home): on a journal-less ext4 with discard, as here, creating
files within a minute of deleting many is several times slower. Targets: cold <= 1.5x the
clone, warm <= 3 s.
"""

from __future__ import annotations

import argparse
import os
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
    are unmounted already: they live in each run's own mount namespace). `rm`, as removing
    ~2,000,000 files from Python takes minutes more."""
    if path.exists():
        subprocess.run(["chmod", "-R", "u+w", str(path)], check=True)
        subprocess.run(["rm", "-rf", "--", str(path)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pause", type=float, default=2.0,
                        help="seconds to wait after each sync, before each timed command")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "agentctl-bench")
    options = parser.parse_args()
    shape = Shape(options.files, commits=5, touched=25, lines=(1, 3), path=nested_path)
    source = cached_repository(options.dir, f"monorepo-{options.files}", shape)
    work = Path(tempfile.mkdtemp(prefix="monorepo-", dir=options.dir))
    try:
        measure(source, work, files=options.files, commits=shape.commits, runs=options.runs,
                pause=options.pause)
    finally:
        remove(work)


def measure(source: Path, work: Path, *, files: int, commits: int, runs: int,
            pause: float) -> None:
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

    def timed(action: Callable[[], None]) -> float:
        os.sync()  # none pays for another's writeback
        time.sleep(pause)
        started = time.perf_counter()
        action()
        return time.perf_counter() - started

    clone_times: list[float] = []
    cold_times: list[float] = []
    warm_times: list[float] = []
    ratios: list[float] = []
    for number in range(runs):
        sequence = [clone, cold, cold, clone] if number % 2 == 0 else [cold, clone, clone, cold]
        steps = [(action, timed(action)) for action in sequence]
        for pair in (steps[:2], steps[2:]):  # adjacent: the same moment of the disk
            by_kind = dict(pair)
            clone_times.append(by_kind[clone])
            cold_times.append(by_kind[cold])
            ratios.append(by_kind[cold] / by_kind[clone])
        warm_times.append(timed(agentctl(warm_home)))
    load = os.getloadavg()
    baseline = statistics.median(clone_times)
    print(f"a noop run with a one-file patch and `true` as its check ({runs} rounds, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
    print(f"  {'git clone (baseline)':<34} {baseline:7.3f} s  {1:5.2f}x   "
          f"[{', '.join(f'{s:.2f}' for s in clone_times)}]")
    cold_ratio = statistics.median(ratios)
    print(f"  {'agentctl cold (empty tree cache)':<34} {statistics.median(cold_times):7.3f} s  "
          f"{cold_ratio:5.2f}x   target <= {COLD_RATIO:.1f}x   "
          f"[{', '.join(f'{s:.2f}' for s in cold_times)}]")
    print(f"    (the median of each cold run's ratio to the clone beside it: "
          f"{', '.join(f'{r:.2f}' for r in ratios)})")
    warm = statistics.median(warm_times)
    print(f"  {'agentctl warm (base cached)':<34} {warm:7.3f} s  {warm / baseline:5.2f}x   "
          f"target <= {WARM_SECONDS:.1f} s   [{', '.join(f'{s:.2f}' for s in warm_times)}]")


if __name__ == "__main__":
    main()
