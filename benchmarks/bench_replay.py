"""A replay beside the run it replays, in the same session (issue 26). Real Claude Code (npm,
pinned, installed into the test cache); the scripted fake Anthropic API of
tests/agents/fake_models.py (the one fake: the model vendor), answering each request after a
fixed delay that stands for the model's own latency.

    .venv/bin/python benchmarks/bench_replay.py [--calls 50] [--latency 0.2]

A `--agent claude` run of CALLS `Bash echo N` calls (CALLS + 1 model requests) is recorded;
the fake is stopped; `agentctl run replay` plays it again from its record. Printed: the
replay's wall time beside the run's minus the model's latency (requests x delay).
Target: at most 1.2x.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctl.services.admin.demo import prepare  # noqa: E402
from tests.agents.conftest import CLAUDE, claude_config, install_cli  # noqa: E402
from tests.agents.fake_models import (  # noqa: E402
    Call,
    FakeModel,
    Script,
    Text,
    render_anthropic,
)

AGENTCTL = str(Path(sys.executable).parent / "agentctl")
IDENTITY = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@x"}


def line(name: str, value: float, baseline: float, unit: str, target: str) -> None:
    ratio = f"{value / baseline:5.2f}x" if baseline else "      "
    print(f"{name:<52} {value:9.3f} {unit}  baseline {baseline:9.3f} {unit}  {ratio}  "
          f"target {target}")


def slow_model(delay: float) -> FakeModel:
    def render(script: Script, body: dict[str, Any]) -> Iterator[bytes]:
        time.sleep(delay)  # the model thinking before its first byte
        yield from render_anthropic(script, body)

    return FakeModel(render)


def agentctl(root: Path, env: dict[str, str], *args: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run([AGENTCTL, *args, "--json"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1200)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"agentctl {' '.join(args)} failed: {done.stderr}")
    return elapsed, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.2)
    options = parser.parse_args()
    claude = install_cli(*CLAUDE)
    root = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    try:
        repository, _plans, _settings = prepare(root)
        (root / ".agentctl.toml").write_text(claude_config(claude).replace(
            "max_turns = 30", f"max_turns = {options.calls + 10}"))
        model = slow_model(options.latency)
        env = {**os.environ, **IDENTITY, "AGENTCTL_HOME": str(root / "home"),
               "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-bench-0123456789"}
        env.pop("AGENTCTL_CONFIG", None)
        model.script = Script([[Call("Bash", {"command": f"echo {n}", "description": "echo"})]
                               for n in range(options.calls)] + [[Text("done")]])
        _took, task = agentctl(root, env, "task", "submit", "--repo", str(repository), "--type",
                               "api_migration", "--instruction", "bench", "--autonomy",
                               "supervised_pr")
        recorded, run = agentctl(root, env, "run", "start", task["taskId"], "--agent", "claude")
        requests = len(model.script.requests)
        model.close()
        replayed, report = agentctl(root, env, "run", "replay", run["runId"])
        if not report["identical"]:
            sys.exit(f"the replay was not identical: {report['differences']}")
        thinking = requests * options.latency
        print(f"{options.calls} tool calls, {requests} model requests, {options.latency:g} s each")
        line("recorded run (wall)", recorded, recorded, "s", "")
        line("replay vs run minus model latency", replayed, recorded - thinking, "s", "<= 1.2x")
    finally:  # the sample repository, its home and the run's records
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
