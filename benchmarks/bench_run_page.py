"""Reading a big run (issue 50): `verdict explain` and `run report --format html` of a run of
6,431 tests (idna's suite size), beside baselines measured in the same run.

    .venv/bin/python benchmarks/bench_run_page.py [--tests 6431] [--repeat 5]

The run is real, made through the installed `agentctl` and its store: a generated pytest suite of
TESTS tests checked against its base (`baseline = "always"`), a patch that breaks one test in a
thousand (so the record holds both PASS_TO_FAIL and thousands of PASS_TO_PASS). Each command is a
fresh `agentctl` process, the best of REPEAT, beside `agentctl --help` and `agentctl run list`.
Targets: each <= 0.5 s; the page <= 300 kB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.e2e.runs_support import toml_plan  # noqa: E402  (the plans the tests write)

AGENTCTL = str(Path(sys.executable).parent / "agentctl")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def line(name: str, value: float, baseline: float, unit: str, target: str) -> None:
    print(f"{name:<44} {value:8.3f} {unit}  baseline {baseline:8.3f} {unit}  "
          f"{value / baseline:5.2f}x  target {target}")


def cli(home: Path, cwd: Path, *args: str) -> str:
    done = subprocess.run([AGENTCTL, *args], cwd=cwd, env={**ENV, "AGENTCTL_HOME": str(home)},
                          capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"agentctl {' '.join(args)} exited {done.returncode}: "
                         f"{done.stderr[-1000:]}")
    return done.stdout


def best(home: Path, cwd: Path, args: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        cli(home, cwd, *args)
        times.append(time.perf_counter() - start)
    return min(times)


def big_run(root: Path, tests: int) -> tuple[Path, Path, str]:
    """A home holding one run of a `tests`-test pytest suite against its base."""
    repo, cwd, home = root / "repo", root / "cwd", root / "home"
    (repo / "tests").mkdir(parents=True)
    cwd.mkdir()
    (repo / "codec.py").write_text("def encode(n):\n    return n\n")
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "test_codec.py").write_text(
        "import pytest\n\nfrom codec import encode\n\n\nclass TestCodec:\n"
        f"    @pytest.mark.parametrize('n', range({tests}))\n"
        "    def test_label(self, n):\n        assert encode(n) == n\n")
    subprocess.run("git init -q -b main && git add -A && git commit -qm init", shell=True,
                   cwd=repo, check=True, env=ENV)
    (cwd / ".agentctl.toml").write_text('[verification]\nreruns = 0\nbaseline = "always"\n')
    (cwd / "plan.toml").write_text(toml_plan(
        {"tool": "fs.replace", "path": "codec.py", "old": "return n",
         "new": "return n if n % 1000 else -1"}))
    task = json.loads(cli(home, cwd, "task", "submit", "--repo", str(repo), "--type",
                          "refactor", "--instruction", "encode labels", "--verify",
                          f"{sys.executable} -m pytest -q -p no:cacheprovider", "--json"))
    run = json.loads(cli(home, cwd, "run", "start", task["taskId"], "--agent",
                         f"script:{cwd / 'plan.toml'}", "--json"))
    return home, cwd, str(run["runId"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=6431)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        home, cwd, run_id = big_run(root, options.tests)
        explained = json.loads(cli(home, cwd, "verdict", "explain", run_id, "--json"))
        counted = len(explained["classification"][0]["classifiedTests"])
        print(f"run {run_id}: {counted} classified tests, verdict {explained['status']}")
        page = root / "page.html"
        help_time = best(home, cwd, ["--help"], options.repeat)
        listed = best(home, cwd, ["run", "list"], options.repeat)
        explain = best(home, cwd, ["verdict", "explain", run_id], options.repeat)
        report = best(home, cwd, ["run", "report", run_id, "--format", "html", "--output",
                                  str(page)], options.repeat)
        line(f"verdict explain ({counted} tests) vs --help", explain, help_time, "s", "<= 0.5 s")
        line(f"verdict explain ({counted} tests) vs run list", explain, listed, "s", "<= 0.5 s")
        line(f"run report --format html vs --help", report, help_time, "s", "<= 0.5 s")
        line(f"run report --format html vs run list", report, listed, "s", "<= 0.5 s")
        print(f"{'page size':<44} {page.stat().st_size / 1000:8.1f} kB  target <= 300 kB")


if __name__ == "__main__":
    main()
