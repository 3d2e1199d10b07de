"""The dialog's repository inspection (test-command detection) on a 20,000-file repository,
beside a baseline measured in the same run: `git rev-parse --show-toplevel`, the least any
look at a repository costs.

    .venv/bin/python benchmarks/bench_detection.py [--files 20000] [--runs 21]

Target: detection <= 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agentctl.execution.verification.test_detection import detect_test_commands


def build(root: Path, files: int) -> None:
    """A Python project: pyproject with pytest settings, a package and tests, `files` files."""
    (root / "pyproject.toml").write_text("[project]\nname = 'big'\n\n[tool.pytest.ini_options]\n"
                                         "testpaths = ['tests']\n")
    for n in range(files - 1):
        folder = root / ("tests" if n % 5 == 0 else "src") / f"m{n // 200:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.py").write_text(f"X = {n}\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def median_ms(action: object, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-detection-") as folder:
        root = Path(folder)
        build(root, args.files)
        assert detect_test_commands(root) == ("python -m pytest",)
        detection = median_ms(lambda: detect_test_commands(root), args.runs)
        baseline = median_ms(lambda: subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True,
            check=True), args.runs)
    print(f"repository of {args.files:,} files, median of {args.runs} runs")
    print(f"  git rev-parse (baseline)   {baseline:8.2f} ms")
    print(f"  test-command detection     {detection:8.2f} ms  ({detection / baseline:.2f}x "
          f"baseline; target <= 100 ms: {'ok' if detection <= 100 else 'MISSED'})")


if __name__ == "__main__":
    main()
