"""Workspace preparation, patch collection and the fresh verification checkout, each beside a
plain-git baseline run alongside it.

    python benchmarks/bench_workspace.py              # 20,000 files, ~150 MB, 200 commits
    python benchmarks/bench_workspace.py --files 2000 # a quick run
    python benchmarks/bench_workspace.py --files 200 --commits 2 --runs 1  # CI's smoke run

The repository is generated once with `git fast-import` and cached (see --dir). Each round
removes the previous clones, then times the baseline and agentctl in alternating order, each
after a `sync`. agentctl's trees are timed as views of the tree cache (warm: the base checked
out by an earlier run; cold: checked out into the cache first) and, for comparison, as
checkouts of their own. Targets (issue 30): the agent's workspace <= 0.2x a `git clone` with
the cache warm, the verified tree (base + patch) and the baseline tree <= 0.1x, collecting the
patch after 50 edits <= 1.5x `git add -A && git diff --cached`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from generated_repo import Shape, cached_repository
from path_taken import in_process

from agentctl.domain.spec import PatchBoundary
from agentctl.execution.workspaces import overlay
from agentctl.execution.workspaces.discard import remove_workspace
from agentctl.execution.workspaces.patch_collector import collect_patch
from agentctl.execution.workspaces.tree_cache import TreeCache
from agentctl.execution.workspaces.workspace import (
    AttemptDirs,
    checkout_base,
    checkout_patched,
    clone_at,
    create_attempt_dirs,
)

EDITED_FILES = 50
TARGET_RATIO = 0.2  # the warm view; the other rows are for comparison
COLLECT_RATIO = 1.5
VERIFIED_RATIO = 0.1


Candidate = tuple[Callable[[], object], Callable[[], object]]  # (prepare, the timed action)


def side_by_side(
    runs: int, candidates: dict[str, Candidate], new_round: Callable[[], object] = lambda: None,
) -> dict[str, list[float]]:
    """Rounds that start from the same state, the candidates' order alternating between rounds.

    Neither candidate always runs right after the other's writes or deletions: on a journal-less
    ext4 (as on this machine) creating files within a minute of deleting many is several times
    slower, because the inode allocator skips recently deleted inodes one by one.
    """
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for number in range(runs):
        new_round()
        order = list(candidates.items())
        for name, (prepare, action) in order if number % 2 == 0 else order[::-1]:
            prepare()
            os.sync()  # neither pays for the other's writeback
            started = time.perf_counter()
            action()
            times[name].append(time.perf_counter() - started)
    return times


def report(title: str, times: dict[str, list[float]], target: float | None = None) -> None:
    print(title)
    baseline = statistics.median(next(iter(times.values())))
    for position, (name, samples) in enumerate(times.items()):
        median = statistics.median(samples)
        goal = f"   target <= {target:.2f}x" if target and position else ""
        runs = ", ".join(f"{sample:.3f}" for sample in samples)
        print(f"  {name:<40} {median:8.3f} s  {median / baseline:5.2f}x{goal}   [{runs}]")


def git(repo: Path, *args: str, stdout: int | None = None) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, stdout=stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--commits", type=int, default=Shape(0).commits,
                        help="history of the generated repository (default %(default)s)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "agentctl-bench")
    options = parser.parse_args()
    shape = Shape(options.files, commits=options.commits)
    name = f"repo-{options.files}" + ("" if options.commits == Shape(0).commits
                                      else f"-{options.commits}")
    source = cached_repository(options.dir, name, shape)
    commit = subprocess.run(["git", "-C", str(source), "rev-parse", "main"], check=True,
                            capture_output=True, text=True).stdout.strip()
    size = sum(p.stat().st_size for p in source.rglob("*") if p.is_file() and ".git" not in p.parts)
    print(f"repository: {options.files} files, {size / 1e6:.1f} MB, {shape.commits} commits, "
          f"{os.cpu_count()} cores, {source}")
    overlay.prepare()  # a normal user's namespace for views: while this process has one thread
    views = overlay.supported(options.dir)
    print(in_process(views, overlay.refusal()), flush=True)

    plain = options.dir / "clone-plain"
    dirs: list[AttemptDirs] = []
    warm = TreeCache(options.dir / "trees-warm", 2**40)
    cold = TreeCache(options.dir / "trees-cold", 2**40)

    def remove_clones() -> None:
        remove_workspace(plain)
        while dirs:
            remove_workspace(dirs.pop().root)

    def attempt(cache: TreeCache | None) -> Callable[[], None]:
        def prepare() -> None:
            dirs.append(create_attempt_dirs(options.dir))
            clone_at(str(source), commit, dirs[-1], is_url=False, cache=cache)
        return prepare

    remove_workspace(warm.root)
    attempt(warm)()  # fills the warm cache
    clones = side_by_side(options.runs, {
        "git clone (baseline)": (
            lambda: None, lambda: git(options.dir, "clone", "-q", str(source), str(plain))),
        "clone_at, own checkout (no cache)": (lambda: None, attempt(None)),
        "clone_at, cache cold (checks out once)": (
            lambda: remove_workspace(cold.root), attempt(cold)),
        "clone_at, cache warm (a view)": (lambda: None, attempt(warm)),
    }, new_round=remove_clones)
    remove_workspace(plain)
    remove_workspace(cold.root)
    report(f"workspace preparation (median of {options.runs})", clones, TARGET_RATIO)
    remove_clones()
    attempt(warm)()
    workspace = dirs[-1]
    tree = workspace.tree

    edited = sorted(p for p in tree.rglob("*.py"))[:: max(1, options.files // EDITED_FILES)]
    for path in edited[:EDITED_FILES]:
        with path.open("a") as handle:
            handle.write("# edited by the benchmark\n")
    boundary = PatchBoundary(allowed_paths=(), forbidden_paths=(), lockfile_patterns=(),
                             generated_patterns=())
    raw_diff, diff = options.dir / "raw.diff", options.dir / "patch.diff"

    def raw() -> None:
        git(tree, "add", "-A")
        with raw_diff.open("wb") as out:
            git(tree, "diff", "--cached", "--binary", "--full-index", "-M", commit,
                stdout=out.fileno())

    collected = collect_patch(workspace, commit, diff, boundary)
    assert len(collected.changes) == len(edited[:EDITED_FILES]), "edits missing from the patch"

    def unstage() -> None:
        git(tree, "reset", "-q")  # the baseline stages the edits; start each run without them

    patches = side_by_side(options.runs, {
        "git add -A && git diff --cached (baseline)": (unstage, raw),
        "collect_patch (a view)": (unstage, lambda: collect_patch(workspace, commit, diff,
                                                                  boundary)),
    })
    report(f"patch collection after editing {EDITED_FILES} files (median of {options.runs})",
           patches, COLLECT_RATIO)

    own = create_attempt_dirs(options.dir)  # an attempt without the cache, for comparison
    clone_at(str(source), commit, own, is_url=False)
    copy = own.scratch / "patch.diff"
    copy.write_bytes(diff.read_bytes())

    def removed(tree: Path) -> Callable[[], None]:
        """Untimed, as the baseline's removal of its clone: the last round's tree and its
        layer (a view's changes)."""
        def prepare() -> None:
            remove_workspace(tree)
            remove_workspace(tree.parent / "layers" / tree.name)
        return prepare

    def fresh(where: AttemptDirs, patch: Path) -> Candidate:
        return removed(where.verify), lambda: checkout_patched(where, commit, patch)

    def base_tree(where: AttemptDirs) -> Candidate:
        return removed(where.base_verify), lambda: checkout_base(where, commit)

    clone = ("git clone (baseline)", (lambda: remove_workspace(plain),
                                      lambda: git(options.dir, "clone", "-q", str(source),
                                                  str(plain))))
    checkouts = side_by_side(options.runs, dict([
        clone,
        ("checkout_patched, own checkout", fresh(own, copy)),
        ("checkout_patched, a view", fresh(workspace, diff)),
    ]))
    report(f"the verified tree, base + patch (median of {options.runs})", checkouts,
           VERIFIED_RATIO)
    bases = side_by_side(options.runs, dict([
        clone,
        ("checkout_base, own checkout", base_tree(own)),
        ("checkout_base, a view", base_tree(workspace)),
    ]))
    report(f"the baseline tree (median of {options.runs})", bases, VERIFIED_RATIO)
    remove_workspace(plain)
    remove_workspace(own.root)
    remove_clones()
    remove_workspace(warm.root)


if __name__ == "__main__":
    main()
