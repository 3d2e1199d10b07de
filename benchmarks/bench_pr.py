"""`pr create` against a local fake forge, and `run attest` of a 1,000-step run (issue 27).

    .venv/bin/python benchmarks/bench_pr.py [--repeat 3] [--steps 1000]

1. `pr create --remote BARE` opening the PR on a fake GitHub on 127.0.0.1 vs today's
   branch-only `pr create --remote BARE` (forge "none"), each on its own fresh run, as fresh
   `agentctl` processes. Target <= 1.5x.
2. `run attest` of a run with STEPS tool-call steps vs `run show --json` of the same run (a
   command that reads the run, as the baseline). Target <= 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.forge_fake import FakeForge  # noqa: E402  (the same fake the tests use)

AGENTCTL = str(Path(sys.executable).parent / "agentctl")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x", "GITHUB_TOKEN": "bench-token"}


def line(name: str, value: float, baseline: float, unit: str, target: str) -> None:
    print(f"{name:<44} {value:8.3f} {unit}  baseline {baseline:8.3f} {unit}  "
          f"{value / baseline:5.2f}x  target {target}")


def cli(home: Path, cwd: Path, *args: str) -> str:
    done = subprocess.run([AGENTCTL, *args], cwd=cwd, env={**ENV, "AGENTCTL_HOME": str(home)},
                          capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"agentctl {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def timed(home: Path, cwd: Path, *args: str) -> float:
    start = time.perf_counter()
    cli(home, cwd, *args)
    return time.perf_counter() - start


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "README.md").write_text("bench\n")
    subprocess.run("git init -q -b main && git add -A && git commit -qm init", shell=True,
                   cwd=path, check=True, env=ENV)
    return path


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def new_run(home: Path, cwd: Path, repo: Path, plan: Path) -> str:
    out = cli(home, cwd, "task", "submit", "--repo", str(repo), "--type", "refactor",
              "--instruction", "bench", "--autonomy", "draft_pr", "--verify", "true", "--run",
              "--agent", f"script:{plan}", "--json")
    return str(json.loads(out)["runId"])


def plan_of(path: Path, steps: int) -> Path:
    path.write_text("".join(f'[[step]]\ntool = "fs.write"\npath = "f{i}.txt"\ncontent = "{i}"\n\n'
                            for i in range(steps)))
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    forge = FakeForge("github").start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-pr-") as scratch:
            root = Path(scratch)
            home, cwd = root / "home", root / "cwd"
            cwd.mkdir()
            small = plan_of(cwd / "one.toml", 1)
            forge_config = cwd / "github.toml"
            forge_config.write_text(f'[pr]\nforge = "github"\napi_url = "{forge.url}"\n'
                                    'repository = "octo/calc"\n')
            plain: list[float] = []
            opened: list[float] = []
            for i in range(args.repeat):
                for kind, into in (("plain", plain), ("forge", opened)):
                    repo = make_repo(root / f"{kind}{i}")
                    run_id = new_run(home, cwd, repo, small)
                    options = ("--config", str(forge_config)) if kind == "forge" else ()
                    into.append(timed(home, cwd, *options, "pr", "create", run_id, "--remote",
                                      str(bare(root / f"{kind}{i}.git"))))
            assert len(forge.seen("POST", "/repos/octo/calc/pulls")) == args.repeat
            line("pr create, fake GitHub (median)", statistics.median(opened),
                 statistics.median(plain), "s", "<= 1.5x")

            big = make_repo(root / "big")
            run_id = new_run(home, cwd, big, plan_of(cwd / "many.toml", args.steps))
            cli(home, cwd, "attest", "pubkey")  # the key is made once, not timed
            attest = [timed(home, cwd, "run", "attest", run_id, "--output", str(root / "b.jsonl"))
                      for _ in range(args.repeat)]
            show = [timed(home, cwd, "run", "show", run_id, "--json") for _ in range(args.repeat)]
            line(f"run attest, {args.steps}-step run (median)", statistics.median(attest),
                 statistics.median(show), "s", "<= 0.5 s")
    finally:
        forge.stop()


if __name__ == "__main__":
    main()
