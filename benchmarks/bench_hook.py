"""The hook process alone, as a CLI starts it (`sh -c` the adapters' command), per invocation:
the Python hook and the compiled one, each answering a PreToolUse from a real attempt socket
(a BridgeServer whose handler allows at once), interleaved so that both see the same load;
and a shell that starts nothing, for the floor. Issue 46: the hook per tool call <= +20 ms
over the CLI alone, and a CLI starts it twice per call (before and after).

    .venv/bin/python benchmarks/bench_hook.py [--runs 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctl.execution.agents import AttemptIdentity  # noqa: E402
from agentctl.execution.agents.channel import hook_command  # noqa: E402
from agentctl.execution.agents.hook_binary import native_hook  # noqa: E402
from agentctl.execution.agents.hook_socket import BridgeServer, Credentials, Source  # noqa: E402

PRE = json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                  "tool_input": {"command": "true"}, "tool_use_id": "toolu_1"}).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    root = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    keys = Credentials()
    identity = AttemptIdentity(root, "attempt_bench")

    def allow(message: dict[str, object], source: Source) -> dict[str, object]:
        return {"decision": "allow", "reason": "ok"}

    server = BridgeServer(identity, allow, keys)
    done = threading.Event()
    thread = threading.Thread(target=lambda: [server.serve(0.05) for _ in iter(
        done.is_set, True)], daemon=True)
    thread.start()
    choice = native_hook(root / "cache", os.environ)
    if choice.binary is None:
        sys.exit(f"no native hook: {choice.why}")
    commands = {"shell alone (sh -c true)": "true",
                "Python hook": hook_command("claude", identity, keys.hook),
                "native hook": hook_command("claude", identity, keys.hook, choice.binary)}
    times: dict[str, list[float]] = {name: [] for name in commands}
    try:
        for _ in range(args.runs):
            for name, command in commands.items():
                started = time.perf_counter()
                ran = subprocess.run(["sh", "-c", command], input=PRE, capture_output=True,
                                     check=False)
                times[name].append(time.perf_counter() - started)
                if ran.returncode != 0:
                    sys.exit(f"{name} failed: {ran.stderr.decode()}")
    finally:
        done.set()
        thread.join()
        server.close()
    floor = statistics.median(times["shell alone (sh -c true)"])
    for name, each in times.items():
        median = statistics.median(each)
        print(f"{name:<28} median {1000 * median:7.2f} ms  over the shell "
              f"{1000 * (median - floor):7.2f} ms  (p90 "
              f"{1000 * statistics.quantiles(each, n=10)[-1]:7.2f} ms)")


if __name__ == "__main__":
    main()
