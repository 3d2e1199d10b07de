"""A unittest bug fix on a base that already fails many tests, agentctl beside the same evidence
by hand, in the same run (issue 47: reruns that pay once).

    .venv/bin/python benchmarks/bench_unittest_reruns.py [--tests 3000] [--failing 300] [--runs 3]

The project: `--tests` passing tests over modules of 100, `--failing` tests that fail on the base
and with the patch, one module that cannot import (a missing optional dependency), and `add`,
broken on the base, fixed by the patch (its test FAIL_TO_PASS, named with --must-pass).

- by hand, the same evidence: `git clone` + `git apply` + `python -m unittest` beside a second
  clone's `python -m unittest` on the base (two cores), then the failing tests of each side run
  again by id, each side in one process beside the other (the import error is not rerun);
- agentctl: `agentctl task submit --type bug_fix --verify 'python -m unittest' --run --agent
  patch:fix.diff` with the default config (sandbox on, the base's checks for the baseline,
  `reruns = 2`), a new state home each time (nothing cached).

Printed: each way's median, the ratio, and what agentctl's record shows of its reruns (the
RUN_VERIFIER steps, the rerun steps and how many tests each selected).
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
from pathlib import Path
from typing import Any

AGENTCTL = str(Path(sys.executable).with_name("agentctl"))
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
COMMAND = f"{sys.executable} -m unittest"
MUST_PASS = "test_calc.AddTest.test_add"


def project(root: Path, tests: int, failing: int) -> tuple[Path, Path]:
    """The repository (its base on `main`) and the fix as a diff."""
    repo = root / "repo"
    files = {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "import unittest\n\nfrom calc import add\n\n\n"
                        "class AddTest(unittest.TestCase):\n"
                        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
        "test_props.py": "import not_installed_anywhere  # noqa: F401\n",
        "test_broken.py": "import unittest\n\n\nclass Broken(unittest.TestCase):\n" + "".join(
            f"    def test_already_broken_{n:04}(self):\n        self.assertEqual({n}, -1)\n\n"
            for n in range(failing)),
    }
    for module in range(0, tests, 100):
        files[f"test_pass_{module // 100:03}.py"] = (
            "import unittest\n\n\nclass Passing(unittest.TestCase):\n" + "".join(
                f"    def test_{n}(self):\n        self.assertEqual(sum(range({n})), {n * (n - 1) // 2})\n\n"
                for n in range(module, min(module + 100, tests))))
    repo.mkdir(parents=True)
    for name, text in files.items():
        (repo / name).write_text(text)
    subprocess.run("git init -q -b main && git add -A && git commit -qm base", shell=True,
                   cwd=repo, check=True, env=GIT_ENV)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    diff = root / "fix.diff"
    diff.write_text(subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True,
                                   check=True).stdout)
    subprocess.run(["git", "checkout", "-q", "--", "calc.py"], cwd=repo, check=True)
    return repo, diff


def failing_ids(output: str) -> list[str]:
    """The failing tests unittest names (`FAIL: test_x (module.Class.test_x)`), but for a
    module that could not import."""
    ids = []
    for line in output.splitlines():
        if line.startswith(("FAIL: ", "ERROR: ")) and "(" in line:
            test_id = line[line.index("(") + 1:line.rindex(")")]
            name = line.split()[1]
            test_id = test_id if test_id.endswith(f".{name}") else f"{test_id}.{name}"
            if not test_id.startswith("unittest.loader._FailedTest"):
                ids.append(test_id)
    return ids


def by_hand(root: Path, repo: Path, diff: Path) -> float:
    patch_tree, base_tree = root / "patch", root / "base"
    started = time.perf_counter()
    clones = [subprocess.Popen(["git", "clone", "-q", str(repo), str(tree)])
              for tree in (patch_tree, base_tree)]
    for clone in clones:
        clone.wait()
    subprocess.run(["git", "apply", str(diff)], cwd=patch_tree, check=True)
    runs = [subprocess.Popen(COMMAND.split(), cwd=tree, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
            for tree in (patch_tree, base_tree)]
    outputs = [run.communicate()[0] for run in runs]
    reruns = [subprocess.Popen([*COMMAND.split(), *ids], cwd=tree, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
              for tree, ids in zip((patch_tree, base_tree), map(failing_ids, outputs),
                                   strict=True) if ids]
    for rerun in reruns:
        rerun.wait()
    return time.perf_counter() - started


def with_agentctl(root: Path, repo: Path, diff: Path) -> tuple[float, dict[str, Any]]:
    home = root / "home"
    root.mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "AGENTCTL_HOME": str(home)}
    started = time.perf_counter()
    ran = subprocess.run([AGENTCTL, "task", "submit", "--repo", str(repo), "--base", "main",
                          "--type", "bug_fix", "--instruction", "fix add", "--verify", COMMAND,
                          "--must-pass", MUST_PASS, "--run", "--agent", f"patch:{diff}",
                          "--json"], cwd=root, env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    run = json.loads(ran.stdout) if ran.stdout.strip() else {}
    if not run.get("runId"):
        sys.exit(f"agentctl did not run: {ran.stderr.strip()[-500:]}")
    shown = json.loads(subprocess.run([AGENTCTL, "run", "show", run["runId"], "--tree", "--json"],
                                      cwd=root, env=env, capture_output=True, text=True,
                                      check=True).stdout)
    steps = [s for a in shown["attempts"] for s in a["steps"] if s["type"] == "RUN_VERIFIER"]
    return took, {"verdict": run["verdict"]["status"], "steps": [
        (s["title"].split(":")[0], s["attributes"].get("selectedCount", 0),
         s["attributes"].get("reranInProcessCount", len(s["attributes"].get("reranInProcess", {}))))
        for s in steps]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=3000, help="passing tests (default 3000)")
    parser.add_argument("--failing", type=int, default=300,
                        help="tests already failing on the base (default 300)")
    parser.add_argument("--runs", type=int, default=3, help="rounds of each way (default 3)")
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-unittest-reruns-"))
    try:
        repo, diff = project(root / "project", options.tests, options.failing)
        hand: list[float] = []
        tool: list[float] = []
        record: dict[str, Any] = {}
        for number in range(options.runs):  # interleaved: a slower minute slows both
            hand.append(by_hand(root / f"hand-{number}", repo, diff))
            took, record = with_agentctl(root / f"agentctl-{number}", repo, diff)
            tool.append(took)
        print(f"unittest suite: {options.tests} passing, {options.failing} failing on the base "
              f"and with the patch, 1 module that cannot import; {options.runs} runs each")
        print(f"by hand, the same evidence  {statistics.median(hand):7.2f} s  "
              f"({', '.join(f'{t:.2f}' for t in hand)})")
        print(f"agentctl, cold              {statistics.median(tool):7.2f} s  "
              f"({', '.join(f'{t:.2f}' for t in tool)})")
        print(f"ratio                       {statistics.median(tool) / statistics.median(hand):7.2f}x")
        print(f"verdict: {record['verdict']}")
        for role, selected, reran in record["steps"]:
            print(f"  step {role:<16} selected {selected:5}  rerun in process {reran:5}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
