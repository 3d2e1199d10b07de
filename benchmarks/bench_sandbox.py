"""The OS sandbox's costs beside the same work unsandboxed, measured in the same run (issues 11, 30).

    .venv/bin/python benchmarks/bench_sandbox.py [--rounds 20] [--demo-rounds 2]

1. Per process: `run_to_file` of `true` and of `python3 -c pass`, sandboxed (bubblewrap, the
   cgroup, a network namespace and its bridge, started once) vs plain; and bwrap's own cost
   (`bwrap --unshare-all --ro-bind / / true`) vs plain `true`; interleaved, medians. `true` is
   also measured with 30 ms between processes, as a demo's come: a cost the kernel waits out
   between two moves into a cgroup (an RCU grace period) is hidden when they come back to back.
   Target: a sandboxed `true` at most +8 ms, and at most twice bwrap's own cost.
2. The demo's four scenarios (`agentctl demo`) with the sandbox on vs `--no-sandbox`,
   interleaved, medians. Target: at most 1.1x.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentctl.domain.sandbox import SandboxProfile
from agentctl.execution.process import run_to_file
from agentctl.execution.sandboxing.bubblewrap import check
from agentctl.execution.sandboxing.sandbox import Sandbox

AGENTCTL = str(Path(sys.executable).parent / "agentctl")


def line(name: str, value: float, baseline: float, unit: str, target: str) -> None:
    print(f"{name:<40} {value:8.1f} {unit}  baseline {baseline:8.1f} {unit}  "
          f"{value / baseline:5.2f}x  +{value - baseline:6.1f} {unit}  target {target}")


def bwrap_alone(rounds: int, binary: Path) -> float:
    """bwrap's own cost over plain `true`: the floor a sandboxed process is measured against."""
    plain: list[float] = []
    boxed: list[float] = []
    for _ in range(rounds):
        for sink, argv in ((plain, ["true"]),
                           (boxed, [str(binary), "--unshare-all", "--ro-bind", "/", "/", "true"])):
            started = time.perf_counter()
            subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
            sink.append((time.perf_counter() - started) * 1000)
    line("bwrap --unshare-all --ro-bind / / true", statistics.median(boxed),
         statistics.median(plain), "ms", "(the floor)")
    return statistics.median(boxed) - statistics.median(plain)


def per_process(rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    workspace, scratch = root / "ws", root / "net"
    workspace.mkdir()
    scratch.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    sandbox = Sandbox.for_attempt(SandboxProfile(), env=env, hidden=[root], proxy_dir=scratch)
    floor = bwrap_alone(rounds, sandbox.binary)
    try:
        for name, argv, gap in (("true", ["true"], 0.0), ("true", ["true"], 0.03),
                                ("python3 -c pass", ["python3", "-c", "pass"], 0.0)):
            plain: list[float] = []
            boxed: list[float] = []
            for _ in range(rounds):
                for sink, jail in ((plain, None), (boxed, sandbox.jail(workspace))):
                    time.sleep(gap)
                    started = time.perf_counter()
                    result = run_to_file(argv, cwd=workspace, env=env, output=root / "out",
                                         timeout=30, confine=jail)
                    sink.append((time.perf_counter() - started) * 1000)
                    assert result.exit_code == 0, (root / "out").read_text()
            apart = f", {gap * 1000:.0f} ms apart" if gap else ""
            line(f"process `{name}` sandboxed{apart}", statistics.median(boxed),
                 statistics.median(plain), "ms",
                 f"<= +8 ms, <= +{2 * floor:.1f} ms (2x bwrap's)" if name == "true" else "-")
    finally:
        sandbox.close()
        shutil.rmtree(root, ignore_errors=True)


def demo(rounds: int) -> None:
    on: list[float] = []
    off: list[float] = []
    for _ in range(rounds):
        for sink, flags in ((off, ["--no-sandbox"]), (on, [])):
            home = tempfile.mkdtemp(prefix="bench-demo-")
            started = time.perf_counter()
            subprocess.run([AGENTCTL, "--home", home, "demo", *flags], check=False,
                           capture_output=True)
            sink.append(time.perf_counter() - started)
            shutil.rmtree(home, ignore_errors=True)
    if not on:
        return
    line("demo, 4 scenarios, sandbox on", statistics.median(on) * 1000,
         statistics.median(off) * 1000, "ms", "<= 1.1x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--demo-rounds", type=int, default=2)
    args = parser.parse_args()
    status = check()
    if not status.works:
        raise SystemExit(status.refusal())
    print(f"bubblewrap: {status.bubblewrap.path if status.bubblewrap else '-'} "
          f"({status.version}); limits: {status.cgroups}")
    per_process(args.rounds)
    demo(args.demo_rounds)


if __name__ == "__main__":
    main()
