"""What agentctl adds to a native agent, beside the agent alone, measured in the same run
(issue 12 targets). Real Claude Code (npm, pinned, installed into the test cache), the scripted
fake Anthropic API of tests/agents/fake_models.py (the one fake: the model vendor).

    .venv/bin/python benchmarks/bench_agents.py [--calls 50]

1. Hook overhead per tool call: a session of CALLS `Bash true` calls under `agentctl run start
   --agent claude` (every call through the PreToolUse hook, the attempt's socket, the guards and
   the ledger), beside the very same run with the hook taken out (a wrapper empties the hook
   settings agentctl wrote, then runs claude with agentctl's argv, env, home and workspace, and
   grants the tools itself with --allowedTools so that the very same calls run), and
   `claude` alone for reference. With `[sandbox] mode = "off"` (the hook's own cost) and in the
   sandbox (its model requests also cross the netbridge and the egress proxy; the baseline is
   then sandboxed too). Per call: the time between the model requests on either side of it.
   Target: the median added <= 50 ms.
2. A whole `--agent claude` run of the feature-flag migration (clone, agent, collect, verify,
   judge, verdict), beside the same scripted session run by `claude` alone in a clone. Target:
   everything besides the agent's own time <= 1.5 s.

`--cli copilot` measures the same two for GitHub Copilot CLI (npm, pinned) against the fake
OpenAI Responses API: its hookless baseline keeps only the sessionStart hook (which arms the
run's gateway) of agentctl's `hooks/agentctl.json` in the private COPILOT_HOME before it starts
(Copilot runs every tool with --allow-all-tools), and
the run is tests/agents/test_copilot.py's scripted session. Target per call: <= 20 ms added.

For reference, the CLI alone with hooks that do nothing (a plain `python -E -s -S -c` that
reads its input and answers `{}`, and a compiled C program that does the same: Claude Code's
PreToolUse; Copilot's preToolUse and postToolUse, as agentctl registers them): what the CLI's
own hook runner, with a Python start or with a native one, costs a call whatever the hook
does. The floors under agentctl's per-call figures, which are measured with each of its hooks:
the compiled one (the default where `cc` is) and the Python one (AGENTCTL_NATIVE_HOOK=off).
`--calls-only` skips the whole runs (part 2); `--read` makes the Claude calls `Read`s (no tool
jail per call in the sandbox: the hook alone); `--rounds N` interleaves the per-call runs N times
and reports the median of each (on a loaded machine one round is mostly noise).

`--cli opencode` measures the same for opencode (npm `opencode-ai`, pinned): its guard is
agentctl's plugin inside the CLI, so the run without the guard is the same run with that plugin
replaced by one that only adds the guard's nonce to model requests (without it the gateway
refuses them), and opencode alone runs with an equivalent configuration of its own. The whole
run is the refunds part of the migration (a write, the tests in a shell call).
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctl.domain.agent import ModelApi, NativeAgentSettings  # noqa: E402
from agentctl.execution.agents.opencode import QUIET as OPENCODE_QUIET  # noqa: E402
from agentctl.execution.agents.opencode import config_content, offline  # noqa: E402
from agentctl.execution.sandboxing.sandbox import program_dirs  # noqa: E402
from agentctl.services.admin.demo import prepare  # noqa: E402
from tests.agents.conftest import (  # noqa: E402
    CLAUDE,
    COPILOT,
    OPENCODE,
    copilot_cache,
    install_cli,
)
from tests.agents.fake_models import (  # noqa: E402
    Call,
    FakeModel,
    Script,
    Text,
    anthropic_server,
    openai_server,
)
from tests.agents.test_claude import MIGRATION, REFUNDS  # noqa: E402

AGENTCTL = str(Path(sys.executable).parent / "agentctl")
IDENTITY = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@x"}
QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
         "DISABLE_AUTOUPDATER": "1"}
# A hook that does nothing: what the CLI's hook runner and a Python start cost, and no more.
NOOP_HOOK = f"{sys.executable} -E -s -S -c 'import sys; sys.stdin.read(); print(\"{{}}\")'"
# The same in C: what the CLI's hook runner costs with a native start (`noop_native`).
NOOP_C = ('#include <unistd.h>\nint main(void) {\n  char b[65536];\n'
          '  while (read(0, b, sizeof b) > 0) {}\n  return write(1, "{}\\n", 3) != 3;\n}\n')
# agentctl's hooks compared: the compiled one (its default where cc is) and the Python one.
HOOKS = (("Python hook", {"AGENTCTL_NATIVE_HOOK": "off"}), ("native hook", {}))


def floors(cli: str, what: str, rounds: int, root: Path,
           session: Callable[[str], Script]) -> None:
    """The CLI alone per call, and with each no-op hook (`session(command)` runs the scripted
    session alone with that hook command, none when empty), interleaved over `rounds`: what
    its own hook runner adds per call, with a Python start and with a native one."""
    hooks = {"": "", "Python": NOOP_HOOK, "native": noop_native(root)}
    medians: dict[str, list[float]] = {name: [] for name in hooks}
    for _ in range(rounds):
        for name, command in hooks.items():
            medians[name].append(statistics.median(per_call(session(command))))
    bare = statistics.median(medians[""])
    print(f"{f'(reference) {cli} alone, per tool call (median)':<52} {1000 * bare:9.3f} ms")
    for name in ("Python", "native"):
        each = statistics.median(medians[name])
        print(f"{f'(reference) {cli} alone, {what.format(name=name)}':<52} {1000 * each:9.3f} "
              f"ms  added {1000 * (each - bare):.1f} ms")


def compared(label: str, rounds: int, target: str, hooked: Path, unhooked: Path,
             measure: Callable[[Path, dict[str, str]], float]) -> None:
    """The per-call median with each of agentctl's hooks beside the same run without hooks,
    interleaved over `rounds` (the median of each): `measure(folder, env)` runs one."""
    bases: list[float] = []
    runs: dict[str, list[float]] = {name: [] for name, _ in HOOKS}
    for _ in range(rounds):
        bases.append(measure(unhooked, {}))
        for name, extra in HOOKS:
            runs[name].append(measure(hooked, extra))
    base = statistics.median(bases)
    for name, _ in HOOKS:
        value = statistics.median(runs[name])
        line(f"{label}, {name}", value * 1000, base * 1000, "ms",
             f"added {1000 * (value - base):.1f} ms <= {target}")


def noop_native(root: Path) -> str:
    """The no-op hook compiled (`NOOP_C`), its path."""
    source, binary = root / "noop-hook.c", root / "noop-hook"
    source.write_text(NOOP_C)
    subprocess.run(["cc", "-O2", "-o", str(binary), str(source)], check=True)
    return str(binary)


def line(name: str, value: float, baseline: float, unit: str, target: str) -> None:
    ratio = f"{value / baseline:5.2f}x" if baseline else "      "
    print(f"{name:<52} {value:9.3f} {unit}  baseline {baseline:9.3f} {unit}  {ratio}  "
          f"target {target}")


def alone(claude: Path, server: FakeModel, script: Script, repo: Path, root: Path, *,
          noop_hook: str = "") -> float:
    """The scripted session by `claude` alone in a fresh clone: the agent's own time; with
    `noop_hook`, that command as a PreToolUse hook (one that does nothing)."""
    work = Path(tempfile.mkdtemp(dir=root))
    subprocess.run(["git", "clone", "-q", str(repo), str(work / "repo")], check=True)
    (work / "home").mkdir()
    settings = work / "home" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": noop_hook}]}]} if noop_hook else {}}))
    server.script = script
    env = {"PATH": os.environ["PATH"], "HOME": str(work / "home"), **QUIET,
           "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-bench-0123456789"}
    started = time.perf_counter()
    subprocess.run([str(claude), "-p", "bench", "--output-format", "stream-json", "--verbose",
                    "--allowedTools", "Read Edit Write Bash", "--max-turns", "200",
                    "--settings", str(settings)],
                   cwd=work / "repo", env=env, stdin=subprocess.DEVNULL, check=True,
                   capture_output=True, timeout=600)
    return time.perf_counter() - started


def under_agentctl(root: Path, server: FakeModel, script: Script, repo: Path,
                   home: Path, agent: str = "claude", extra: dict[str, str] | None = None,
                   ) -> float:
    server.script = script
    env = {**os.environ, **(extra or {}), **IDENTITY, "AGENTCTL_HOME": str(home),
           "ANTHROPIC_BASE_URL": server.url,
           "ANTHROPIC_API_KEY": "sk-ant-bench-0123456789", "OPENAI_BASE_URL": f"{server.url}/v1",
           "OPENAI_API_KEY": "sk-bench-0123456789", "COPILOT_CACHE_HOME": str(copilot_cache())}
    env.pop("AGENTCTL_CONFIG", None)
    task = json.loads(subprocess.run(
        [AGENTCTL, "task", "submit", "--repo", str(repo), "--type", "api_migration",
         "--instruction", "bench", "--json"], cwd=root, env=env, check=True,
        capture_output=True, text=True).stdout)["taskId"]
    started = time.perf_counter()
    finished = subprocess.run([AGENTCTL, "run", "start", task, "--agent", agent, "--json"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    if finished.returncode not in (0, 1):
        sys.exit(f"agentctl run failed: {finished.stderr}")
    return elapsed


def without_hook(claude: Path, root: Path) -> Path:
    """`claude` as agentctl launches it, but with only the SessionStart hook (which arms the
    run's gateway) left of the hook settings agentctl wrote, and the tools granted on the
    command line instead (without a hook that allows them, Claude Code run as root would skip
    every call as unpermitted)."""
    keep = ("import json, sys; p = sys.argv[1]; d = json.load(open(p)); "
            "d['hooks'] = {'SessionStart': d['hooks']['SessionStart']}; json.dump(d, open(p, 'w'))")
    wrapper = root / "claude-without-hook"
    wrapper.write_text(f'#!/bin/sh\nprevious=""\nfor word in "$@"; do\n'
                       f'  [ "$previous" = "--settings" ] && python3 -c "{keep}" "$word"\n'
                       f'  previous="$word"\ndone\n'
                       f'exec {claude} "$@" --allowedTools "Read Edit Write Bash"\n')
    wrapper.chmod(0o755)
    return wrapper


def median_call(where: Path, server: FakeModel, script: Script, repo: Path, home: Path,
                agent: str = "claude", extra: dict[str, str] | None = None) -> float:
    under_agentctl(where, server, script, repo, home, agent, extra)
    if len(script.arrivals) != len(script.turns):
        sys.exit(f"the session in {where} stopped after {len(script.arrivals)} model requests")
    return statistics.median(per_call(script))


def per_call(script: Script) -> list[float]:
    """Seconds between consecutive model requests: one tool call and its turn each."""
    arrivals = script.arrivals
    return [later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)]


# What agentctl's plugin does for the model alone: the guard's nonce the gateway asks for.
HEADERS_ONLY = """import { readFileSync } from "node:fs";
export const Headers = async () => {
  const c = JSON.parse(readFileSync(new URL("../agentctl-guard.json", import.meta.url), "utf8"));
  return { "chat.headers": async (_i, o) => { o.headers["x-agentctl-guard"] = c.guard; } };
};
"""
OPENCODE_REFUNDS = [
    [Text("Migrating refunds."), Call("write", {"filePath": "{cwd}/payments/refunds.py",
                                                 "content": REFUNDS})],
    [Call("bash", {"command": "python3 -m unittest discover -s tests -t .",
                   "description": "run the unit tests"})],
    [Text("Refunds migrated; the tests pass.")],
]


def opencode_alone(opencode: Path, server: FakeModel, script: Script, repo: Path,
                   root: Path) -> float:
    """The scripted session by `opencode run` alone in a fresh clone, configured as agentctl
    configures it but with the fake's key in its own configuration and no plugin."""
    work = Path(tempfile.mkdtemp(dir=root))
    subprocess.run(["git", "clone", "-q", str(repo), str(work / "repo")], check=True)
    home = work / "home"
    for folder in (home / "config", home / ".config" / "opencode"):
        offline(folder)
    settings = NativeAgentSettings(command=str(opencode), max_turns=200)
    content = config_content(ModelApi.ANTHROPIC, "claude-sonnet-4-5", f"{server.url}/v1",
                             "sk-ant-bench-0123456789", settings)
    server.script = script
    env = {"PATH": os.environ["PATH"], "HOME": str(home), **OPENCODE_QUIET,
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CACHE_HOME": str(home / "cache"), "XDG_STATE_HOME": str(home / "state"),
           "OPENCODE_CONFIG_DIR": str(home / "config"),
           "OPENCODE_CONFIG_CONTENT": json.dumps(content)}
    started = time.perf_counter()
    subprocess.run([str(opencode), "run", "--format", "json", "--", "bench"], cwd=work / "repo",
                   env=env, stdin=subprocess.DEVNULL, check=True, capture_output=True,
                   timeout=600)
    return time.perf_counter() - started


def opencode_main(calls_wanted: int) -> None:
    opencode = install_cli(*OPENCODE)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    server = anthropic_server()
    root = Path(tempfile.mkdtemp(prefix="bench-opencode-"))
    try:
        repo, _plans, _settings = prepare(root)
        unguarded = root / "opencode-headers-only"
        unguarded.write_text("#!/bin/sh\ncat > \"$OPENCODE_CONFIG_DIR/plugins/agentctl-guard.js\""
                             f" <<'EOF'\n{HEADERS_ONLY}EOF\nexec {opencode} \"$@\"\n")
        unguarded.chmod(0o755)
        visible = json.dumps([str(d) for d in program_dirs(str(opencode), os.environ["PATH"])])
        config = (
            f'[agents.opencode]\ncommand = "{opencode}"\nmax_turns = {calls_wanted + 10}\n\n'
            '[env]\npassthrough = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]\n\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            f'[budget]\nmax_attempts = 1\nmax_tool_calls = {calls_wanted + 10}\n')
        calls = [[Call("bash", {"command": "true", "description": "n"})]
                 for _ in range(calls_wanted)] + [[Text("done")]]
        reference = Script(calls)
        opencode_alone(opencode, server, reference, repo, root)
        print(f"{'(reference) opencode alone, per tool call (median)':<52} "
              f"{1000 * statistics.median(per_call(reference)):9.3f} ms")
        places = []
        for name, extra in (("unsandboxed", '\n[sandbox]\nmode = "off"\n'), ("sandboxed", "")):
            where = root / name
            where.mkdir()
            (where / ".agentctl.toml").write_text(config + extra)
            places.append((where, "sandbox off" if extra else "in the sandbox"))
            hooked = median_call(where, server, Script(calls), repo, where / "home", "opencode")
            bare = root / f"{name}-unguarded"
            bare.mkdir()
            (bare / ".agentctl.toml").write_text(
                (config + extra).replace(str(opencode), str(unguarded))
                + ("" if extra else f"\n[sandbox]\nread_only = {visible}\n"))
            base = median_call(bare, server, Script(calls), repo, bare / "home", "opencode")
            line(f"per tool call, {calls_wanted} calls, {places[-1][1]} (median)",
                 hooked * 1000, base * 1000, "ms", f"added {1000 * (hooked - base):.1f} ms")
        own = statistics.median(opencode_alone(opencode, server, Script(OPENCODE_REFUNDS), repo,
                                               root) for _ in range(3))
        for where, label in places:
            total = statistics.median(under_agentctl(where, server, Script(OPENCODE_REFUNDS),
                                                     repo, where / "home", "opencode")
                                      for _ in range(3))
            line(f"--agent opencode refunds run, {label}", total, own, "s ",
                 f"besides the agent {total - own:.2f} s <= 1.5 s")
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)


def copilot_alone(copilot: Path, server: FakeModel, script: Script, repo: Path,
                  root: Path, *, noop_hooks: str = "") -> float:
    """The scripted session by `copilot` alone in a fresh clone, offline against the fake;
    with `noop_hooks`, that command as a preToolUse and a postToolUse hook."""
    work = Path(tempfile.mkdtemp(dir=root))
    subprocess.run(["git", "clone", "-q", str(repo), str(work / "repo")], check=True)
    (work / "home" / ".copilot" / "hooks").mkdir(parents=True)
    if noop_hooks:
        (work / "home" / ".copilot" / "hooks" / "noop.json").write_text(json.dumps(
            {"version": 1, "hooks": {event: [{"type": "command", "bash": noop_hooks}]
                                     for event in ("preToolUse", "postToolUse")}}))
    server.script = script
    env = {"PATH": os.environ["PATH"], "HOME": str(work / "home"),
           "COPILOT_HOME": str(work / "home" / ".copilot"),
           "COPILOT_CACHE_HOME": str(copilot_cache()), "COPILOT_OFFLINE": "true",
           "COPILOT_PROVIDER_BASE_URL": f"{server.url}/v1", "COPILOT_PROVIDER_TYPE": "openai",
           "COPILOT_PROVIDER_WIRE_API": "responses", "COPILOT_PROVIDER_API_KEY": "sk-bench-0123"}
    started = time.perf_counter()
    subprocess.run([str(copilot), "-p", "bench", "--model", "fake-model", "--allow-all-tools",
                    "--output-format", "json", "--no-auto-update", "--disable-builtin-mcps",
                    "--no-sandbox"], cwd=work / "repo", env=env, stdin=subprocess.DEVNULL,
                   check=True, capture_output=True, timeout=600)
    return time.perf_counter() - started


def copilot_main(calls_wanted: int, calls_only: bool = False, rounds: int = 1) -> None:
    """The two measures for Copilot CLI (see the module's docstring)."""
    from tests.agents.test_copilot import SCRIPT

    copilot = install_cli(*COPILOT)
    server = openai_server()
    root = Path(tempfile.mkdtemp(prefix="bench-agents-"))
    try:
        repo, _plans, _settings = prepare(root)
        hookless = root / "copilot-without-hook"
        # only the session-start hook kept: it arms the run's gateway (the canary)
        keep = ('import json, sys; p = sys.argv[1]; d = json.load(open(p)); '
                'd["hooks"] = {"sessionStart": d["hooks"]["sessionStart"]}; '
                'json.dump(d, open(p, "w"))')
        hookless.write_text(f'#!/bin/sh\npython3 -c \'{keep}\' '
                            f'"$COPILOT_HOME/hooks/agentctl.json"\nexec {copilot} "$@"\n')
        hookless.chmod(0o755)
        visible = json.dumps([str(d) for d in program_dirs(str(copilot), os.environ["PATH"])])
        config = (f'[agents.copilot]\ncommand = "{copilot}"\nmodel = "fake-model"\n'
                  f'max_turns = {calls_wanted + 10}\n\n'
                  '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n\n'
                  '[policy]\nmax_autonomy = "supervised_pr"\n\n'
                  f'[budget]\nmax_attempts = 1\nmax_tool_calls = {calls_wanted + 10}\n')
        sandboxed, unsandboxed = root / "sandboxed", root / "unsandboxed"
        for where, extra in ((sandboxed, ""), (unsandboxed, '\n[sandbox]\nmode = "off"\n')):
            where.mkdir()
            (where / ".agentctl.toml").write_text(config + extra)
        calls = [[Call("bash", {"command": "true", "description": "n"})]
                 for _ in range(calls_wanted)] + [[Text("done")]]

        def session(command: str) -> Script:
            script = Script(calls)
            copilot_alone(copilot, server, script, repo, root, noop_hooks=command)
            return script

        def measure(where: Path, extra: dict[str, str]) -> float:
            return median_call(where, server, Script(calls), repo, where / "home", "copilot",
                               extra)

        floors("copilot", "two no-op {name} hooks", rounds, root, session)
        for where, label in ((unsandboxed, "sandbox off"), (sandboxed, "in the sandbox")):
            unhooked_dir = where.parent / f"{where.name}-nohook"
            unhooked_dir.mkdir()
            (unhooked_dir / ".agentctl.toml").write_text(
                (where / ".agentctl.toml").read_text().replace(str(copilot), str(hookless))
                + ("" if where is unsandboxed else f"\n[sandbox]\nread_only = {visible}\n"))
            compared(f"per tool call, {calls_wanted} calls, {label}", rounds, "20 ms", where,
                     unhooked_dir, measure)
        if calls_only:
            return
        own = statistics.median(copilot_alone(copilot, server, Script(SCRIPT), repo, root)
                                for _ in range(3))
        for where, label in ((unsandboxed, "sandbox off"), (sandboxed, "in the sandbox")):
            total = statistics.median(under_agentctl(where, server, Script(SCRIPT), repo,
                                                     where / "home", "copilot")
                                      for _ in range(3))
            line(f"--agent copilot scripted run, {label}", total, own, "s ",
                 f"besides the agent {total - own:.2f} s <= 1.5 s")
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--cli", choices=("claude", "copilot", "opencode"), default="claude")
    parser.add_argument("--calls-only", action="store_true", help="skip the whole runs")
    parser.add_argument("--read", action="store_true",
                        help="claude: Read calls instead of Bash ones (sandboxed, no tool jail)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="per-call runs interleaved this many times (their median)")
    args = parser.parse_args()
    if args.cli == "copilot":
        copilot_main(args.calls, args.calls_only, args.rounds)
        return
    if args.cli == "opencode":
        opencode_main(args.calls)
        return
    claude = install_cli(*CLAUDE)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (figures scale "
          "with it: both sides run the same CLI)")
    server = anthropic_server()
    root = Path(tempfile.mkdtemp(prefix="bench-agents-"))
    try:
        repo, _plans, _settings = prepare(root)
        hookless = without_hook(claude, root)
        # the jail shows the configured program's own install; the wrapper's is elsewhere
        visible = json.dumps([str(d) for d in program_dirs(str(claude), os.environ["PATH"])])
        config = (
            f'[agents.claude]\ncommand = "{claude}"\nmax_turns = {args.calls + 10}\n\n'
            '[env]\npassthrough = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]\n\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            f'[budget]\nmax_attempts = 1\nmax_tool_calls = {args.calls + 10}\n')
        sandboxed, unsandboxed = root / "sandboxed", root / "unsandboxed"
        for where, extra in ((sandboxed, ""), (unsandboxed, '\n[sandbox]\nmode = "off"\n')):
            where.mkdir()
            (where / ".agentctl.toml").write_text(config + extra)
        # a Read runs in the CLI's own process: no tool jail per call, the hook's cost alone
        call = Call("Read", {"file_path": "{cwd}/payments/refunds.py"}) if args.read \
            else Call("Bash", {"command": "true", "description": "n"})
        calls = [[call] for _ in range(args.calls)] + [[Text("done")]]

        def session(command: str) -> Script:
            script = Script(calls)
            alone(claude, server, script, repo, root, noop_hook=command)
            return script

        def measure(where: Path, extra: dict[str, str]) -> float:
            return median_call(where, server, Script(calls), repo, where / "home", extra=extra)

        floors("claude", "a no-op {name} hook", args.rounds, root, session)
        for where, label in ((unsandboxed, "sandbox off"), (sandboxed, "in the sandbox")):
            unhooked_dir = where.parent / f"{where.name}-nohook"
            unhooked_dir.mkdir()
            (unhooked_dir / ".agentctl.toml").write_text(
                (where / ".agentctl.toml").read_text().replace(str(claude), str(hookless))
                + ("" if where is unsandboxed else f"\n[sandbox]\nread_only = {visible}\n"))
            compared(f"per tool call, {args.calls} calls, {label}", args.rounds, "50 ms", where,
                     unhooked_dir, measure)
        if args.calls_only:
            return

        own = statistics.median(alone(claude, server, Script(MIGRATION), repo, root)
                                for _ in range(3))
        for where, label in ((unsandboxed, "sandbox off"), (sandboxed, "in the sandbox")):
            total = statistics.median(under_agentctl(where, server, Script(MIGRATION), repo,
                                                     where / "home") for _ in range(3))
            line(f"--agent claude migration run, {label}", total, own, "s ",
                 f"besides the agent {total - own:.2f} s <= 1.5 s")
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
