"""What agentctl adds to Gemini CLI, beside the CLI alone (issue 46 targets), in the shape of
bench_agents.py: real Gemini CLI (npm, pinned, installed into the test cache), the scripted
fake Gemini API of tests/agents/fake_gemini.py.

    .venv/bin/python benchmarks/bench_gemini.py [--calls 30]

1. Hook overhead per tool call: a session of CALLS `run_shell_command echo N` calls under
   `agentctl run start --agent gemini` (every call through BeforeTool and AfterTool: two hook
   processes, the attempt's socket, the guards, the ledger and, sandboxed, the call's jail),
   beside the very same run with the hooks taken out (a wrapper empties the hooks of the
   settings agentctl wrote, then runs gemini with agentctl's argv, env, home and workspace),
   and `gemini` alone for reference. Per call: the time between the model requests on either
   side of it. Target: the median added <= 20 ms (the same run without hooks is the CLI
   alone, as agentctl launches it), with each of agentctl's hooks: the compiled one (its
   default where `cc` is) and the Python one (AGENTCTL_NATIVE_HOOK=off). For reference,
   `gemini` alone with two hooks that do nothing (read their input, allow), once as a Python
   start and once compiled: Gemini's own hook runner costs a call that much.
2. A whole `--agent gemini` run of the feature-flag migration (clone, agent, collect, verify,
   judge, verdict), beside the same scripted session run by `gemini` alone in a clone.
   Target: everything besides the agent's own time <= 1.5 s. `--calls-only` skips it;
   `--rounds N` interleaves the per-call runs as in bench_agents.py.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctl.execution.sandboxing.sandbox import program_dirs  # noqa: E402
from agentctl.services.admin.demo import prepare  # noqa: E402
from benchmarks.bench_agents import (  # noqa: E402
    AGENTCTL,
    IDENTITY,
    compared,
    floors,
    line,
    per_call,
)
from tests.agents.conftest import GEMINI, install_cli  # noqa: E402
from tests.agents.fake_gemini import gemini_server  # noqa: E402
from tests.agents.fake_models import Call, FakeModel, Script, Text  # noqa: E402
from tests.agents.test_gemini import migration_script  # noqa: E402

KEY = "AIza-bench-0123456789"
ALONE_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                  "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False}}


def alone(gemini: Path, server: FakeModel, script: Script, repo: Path, root: Path, *,
          noop_hooks: str = "") -> float:
    """The scripted session by `gemini` alone in a fresh clone: the agent's own time. With
    `noop_hooks`, that command as a BeforeTool and an AfterTool hook (one that reads its input
    and allows): what Gemini's own hook runner costs a call, whatever the hook does."""
    work = Path(tempfile.mkdtemp(dir=root))
    subprocess.run(["git", "clone", "-q", str(repo), str(work / "repo")], check=True)
    (work / "home" / ".gemini").mkdir(parents=True)
    hooks = {event: [{"matcher": ".*", "hooks": [{"type": "command", "command": noop_hooks}]}]
             for event in ("BeforeTool", "AfterTool")}
    (work / "home" / ".gemini" / "settings.json").write_text(
        json.dumps({**ALONE_SETTINGS, **({"hooks": hooks} if noop_hooks else {})}))
    server.script = script
    env = {"PATH": os.environ["PATH"], "HOME": str(work / "home"),
           "GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": KEY}
    started = time.perf_counter()
    subprocess.run([str(gemini), "-p", "bench", "--output-format", "stream-json",
                    "--approval-mode", "yolo", "--skip-trust", "-m", "gemini-2.5-pro"],
                   cwd=work / "repo", env=env, stdin=subprocess.DEVNULL, check=True,
                   capture_output=True, timeout=600)
    return time.perf_counter() - started


def under_agentctl(root: Path, server: FakeModel, script: Script, repo: Path,
                   home: Path, extra: dict[str, str] | None = None) -> float:
    server.script = script
    env = {**os.environ, **(extra or {}), **IDENTITY, "AGENTCTL_HOME": str(home),
           "GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": KEY}
    env.pop("AGENTCTL_CONFIG", None)
    task = json.loads(subprocess.run(
        [AGENTCTL, "task", "submit", "--repo", str(repo), "--type", "api_migration",
         "--instruction", "bench", "--json"], cwd=root, env=env, check=True,
        capture_output=True, text=True).stdout)["taskId"]
    started = time.perf_counter()
    finished = subprocess.run([AGENTCTL, "run", "start", task, "--agent", "gemini", "--json"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    if finished.returncode not in (0, 1):
        sys.exit(f"agentctl run failed: {finished.stderr}")
    return elapsed


def without_hooks(gemini: Path, root: Path) -> Path:
    """`gemini` as agentctl launches it, with the tool hooks of the settings agentctl wrote
    into its home taken out (yolo then runs every call unchecked); only SessionStart stays,
    which arms the run's gateway."""
    wrapper = root / "gemini-without-hooks"
    drop = ("import json, os, sys; p = os.path.expanduser('~/.gemini/settings.json'); "
            "s = json.load(open(p)); s['hooks'] = {'SessionStart': s['hooks']['SessionStart']}; "
            "json.dump(s, open(p, 'w'))")
    wrapper.write_text(f"#!/bin/sh\n{sys.executable} -c \"{drop}\" || exit 1\n"
                       f'exec {gemini} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def median_call(where: Path, server: FakeModel, script: Script, repo: Path, home: Path,
                extra: dict[str, str] | None = None) -> float:
    under_agentctl(where, server, script, repo, home, extra)
    if len(script.arrivals) != len(script.turns):
        sys.exit(f"the session in {where} stopped after {len(script.arrivals)} model requests")
    return statistics.median(per_call(script))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--calls-only", action="store_true", help="skip the whole runs")
    parser.add_argument("--rounds", type=int, default=1,
                        help="per-call runs interleaved this many times (their median)")
    args = parser.parse_args()
    gemini = install_cli(*GEMINI)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (figures scale "
          "with it: both sides run the same CLI)")
    server = gemini_server()
    root = Path(tempfile.mkdtemp(prefix="bench-gemini-"))
    try:
        repo, _plans, _settings = prepare(root)
        hookless = without_hooks(gemini, root)
        visible = json.dumps([str(d) for d in program_dirs(str(gemini), os.environ["PATH"])])
        config = (
            f'[agents.gemini]\ncommand = "{gemini}"\nmodel = "gemini-2.5-pro"\n'
            f'max_turns = {2 * args.calls + 20}\n\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            f'[budget]\nmax_attempts = 1\nmax_tool_calls = {args.calls + 10}\n')
        sandboxed, unsandboxed = root / "sandboxed", root / "unsandboxed"
        for where, extra in ((sandboxed, ""), (unsandboxed, '\n[sandbox]\nmode = "off"\n')):
            where.mkdir()
            (where / ".agentctl.toml").write_text(config + extra)
        # distinct commands: Gemini stops a session that repeats one call 5 times (a loop)
        calls = [[Call("run_shell_command", {"command": f"echo {n}", "description": "n"})]
                 for n in range(args.calls)] + [[Text("done")]]

        def session(command: str) -> Script:
            script = Script(calls)
            alone(gemini, server, script, repo, root, noop_hooks=command)
            return script

        def measure(where: Path, extra: dict[str, str]) -> float:
            return median_call(where, server, Script(calls), repo, where / "home", extra)

        floors("gemini", "two no-op {name} hooks", args.rounds, root, session)
        for where, label in ((unsandboxed, "sandbox off"), (sandboxed, "in the sandbox")):
            unhooked_dir = where.parent / f"{where.name}-nohook"
            unhooked_dir.mkdir()
            (unhooked_dir / ".agentctl.toml").write_text(
                (where / ".agentctl.toml").read_text().replace(str(gemini), str(hookless))
                + ("" if where is unsandboxed else f"\n[sandbox]\nread_only = {visible}\n"))
            compared(f"per tool call, {args.calls} calls, {label}", args.rounds, "20 ms", where,
                     unhooked_dir, measure)
        if args.calls_only:
            return

        own = statistics.median(alone(gemini, server, Script(migration_script()), repo, root)
                                for _ in range(3))
        for where, label in ((unsandboxed, "sandbox off"), (sandboxed, "in the sandbox")):
            total = statistics.median(under_agentctl(where, server, Script(migration_script()),
                                                     repo, where / "home") for _ in range(3))
            line(f"--agent gemini migration run, {label}", total, own, "s ",
                 f"besides the agent {total - own:.2f} s <= 1.5 s")
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
