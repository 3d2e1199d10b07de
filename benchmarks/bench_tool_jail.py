"""What running each native shell command in a jail of its own costs per tool call (issue 24
target: <= +30 ms), sandboxed, beside today's hook in the same run. Real Claude Code (npm,
pinned, installed into the test cache) and the scripted fake Anthropic API of
tests/agents/fake_models.py (the one fake: the model vendor).

    .venv/bin/python benchmarks/bench_tool_jail.py [--calls 30] [--rounds 2]

A session of CALLS `Bash true` calls under `agentctl run start --agent claude` in the sandbox:
every call through the PreToolUse hook, which replaces the command with the stub that has the
attempt run it in a fresh jail (`execution/agents/tool_jail.py`). The baseline is the very same
run with the hook's answer passed on without its `updatedInput` (a wrapper around claude
rewrites the hook command agentctl wrote to strip it with sed): the hook still decides and
records, and the command runs as before, inside the CLI's own sandbox (the unused stubs' FIFOs
are still made; no jail boots, since no stub ever starts). Per call: the time between the
model requests on either side of it; rounds interleaved, medians over all calls.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_agents import line, per_call, under_agentctl  # noqa: E402

from agentctl.execution.sandboxing.sandbox import program_dirs  # noqa: E402
from agentctl.services.admin.demo import prepare  # noqa: E402
from tests.agents.conftest import CLAUDE, install_cli  # noqa: E402
from tests.agents.fake_models import Call, Script, Text, anthropic_server  # noqa: E402

# Rewrites agentctl's settings file: the hook's stdout without `updatedInput` (the calls of the
# benchmark are all allowed, so the exit status sed gives the pipeline changes nothing).
STRIP = r"""
import json, sys
path = sys.argv[1]
settings = json.load(open(path))
for entry in settings["hooks"]["PreToolUse"]:
    for hook in entry["hooks"]:
        hook["command"] = "{ " + hook["command"] + "; } | sed -e 's/,\"updatedInput\":.*}}$/}}/'"
json.dump(settings, open(path, "w"))
"""


def unrouted(claude: Path, root: Path) -> Path:
    """`claude` as agentctl launches it, with the hook's replacement input stripped."""
    strip = root / "strip.py"
    strip.write_text(STRIP)
    wrapper = root / "claude-unrouted"
    wrapper.write_text(f'#!/bin/sh\nprevious=""\nfor word in "$@"; do\n'
                       f'  [ "$previous" = "--settings" ] && {sys.executable} {strip} "$word"\n'
                       f'  previous="$word"\ndone\nexec {claude} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    claude = install_cli(*CLAUDE)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    server = anthropic_server()
    root = Path(tempfile.mkdtemp(prefix="bench-tool-jail-"))
    try:
        repo, _plans, _settings = prepare(root)
        visible = [str(d) for d in program_dirs(str(claude), os.environ["PATH"])]
        config = (
            f'[agents.claude]\ncommand = "{{claude}}"\nmax_turns = {args.calls + 10}\n\n'
            '[env]\npassthrough = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]\n\n'
            '[verification]\ncommands = ["true"]\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            f'[budget]\nmax_attempts = 1\nmax_tool_calls = {args.calls + 10}\n\n'
            f'[sandbox]\nread_only = {visible!r}\n'.replace("'", '"'))
        routed_dir, today_dir = root / "jailed", root / "today"
        for where, program in ((routed_dir, claude), (today_dir, unrouted(claude, root))):
            where.mkdir()
            (where / ".agentctl.toml").write_text(config.replace("{claude}", str(program)))
        calls = [[Call("Bash", {"command": "true", "description": "n"})]
                 for _ in range(args.calls)] + [[Text("done")]]
        samples: dict[Path, list[float]] = {routed_dir: [], today_dir: []}
        for _ in range(args.rounds):
            for where in (today_dir, routed_dir):
                script = Script(calls)
                under_agentctl(where, server, script, repo, where / "home")
                if len(script.arrivals) != len(script.turns):
                    sys.exit(f"the session in {where} stopped after {len(script.arrivals)} "
                             "model requests")
                samples[where] += per_call(script)
        jailed = statistics.median(samples[routed_dir])
        today = statistics.median(samples[today_dir])
        line(f"per Bash call, {args.calls}x{args.rounds}, own jail (median)", jailed * 1000,
             today * 1000, "ms", f"added {1000 * (jailed - today):.1f} ms <= 30 ms")
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
