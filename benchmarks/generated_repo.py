"""Large repositories for the benchmarks, generated with `git fast-import` and cached on disk.

Shared by bench_workspace (20,000 files of ~8 KB) and bench_monorepo (200,000 tiny files): the
same generator, seeded, so a cached repository is the same whichever script made it.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def flat_path(index: int) -> str:
    """100 files per folder, all folders at the top."""
    return f"pkg{index // 100:03d}/module_{index:05d}.py"


@dataclass(frozen=True, slots=True)
class Shape:
    """What to generate: `files` files in `commits` commits (the first adds them all, each later
    one rewrites `touched` of them), each file `lines` lines of random words long."""

    files: int
    commits: int = 200
    touched: int = 25
    lines: tuple[int, int] = (35, 225)
    path: Callable[[int], str] = flat_path
    checkout: bool = True  # leave the last commit checked out in the source


def generate(repo: Path, shape: Shape) -> None:
    """The repository at `repo`, its history on `main`."""
    rng = random.Random(20240601)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz_", k=rng.randint(2, 10)))
             for _ in range(3000)]
    pool = [" ".join(rng.choices(words, k=rng.randint(4, 14))) + "\n" for _ in range(20000)]
    paths = [shape.path(i).encode() for i in range(shape.files)]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    importer = subprocess.Popen(["git", "-C", str(repo), "fast-import", "--quiet"],
                                stdin=subprocess.PIPE)
    assert importer.stdin is not None
    for number in range(shape.commits):
        message = f"commit {number}".encode()
        importer.stdin.write(
            b"commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%b\n"
            % (1_700_000_000 + number * 60, len(message), message))
        touched = (range(shape.files) if number == 0
                   else rng.sample(range(shape.files), min(shape.files, shape.touched)))
        for index in touched:
            text = f"# module {index}, revision {number}\n".encode() + "".join(
                rng.choices(pool, k=rng.randint(*shape.lines))).encode()
            importer.stdin.write(
                b"M 100644 inline %b\ndata %d\n%b\n" % (paths[index], len(text), text))
        importer.stdin.write(b"\n")
    importer.stdin.close()
    if importer.wait() != 0:
        raise SystemExit("git fast-import failed")
    if shape.checkout:
        subprocess.run(["git", "-C", str(repo), "-c", "checkout.workers=0", "checkout", "-q",
                        "-f", "main"], check=True)


def cached_repository(root: Path, name: str, shape: Shape) -> Path:
    """`root/name`, generated the first time (a `name.ready` marker says it is complete)."""
    repo, ready = root / name, root / f"{name}.ready"
    if not ready.exists():
        shutil.rmtree(repo, ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        generate(repo, shape)
        ready.write_text("generated\n")
        print(f"generated {repo} in {time.perf_counter() - started:.1f} s")
    return repo
