"""`kill -9` of the worker while Claude Code works: nothing the agent started is left running,
and the next attempt starts clean on a fresh workspace."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.agents.conftest import AgentBench, claude_config
from tests.agents.fake_models import Call, FakeModel, Script, Text
from tests.conftest import AGENTCTL, GIT_IDENTITY

# not `sleep 937`: Claude Code after 2.1.240 refuses a long plain sleep of its own accord
SLEEP = "time.sleep(937)"
COMMAND = f'python3 -c "import time; {SLEEP}"'


def processes_matching(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_for(condition: Any, within: float = 120.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def test_kill_9_of_the_worker_leaves_no_orphan_and_the_next_attempt_starts_clean(
        payments: tuple[Path, Path], claude_cli: Path, anthropic: FakeModel,
        run_agentctl: Any) -> None:
    root, repository = payments
    bench = AgentBench(root, repository, run_agentctl, {
        "ANTHROPIC_BASE_URL": anthropic.url, "ANTHROPIC_API_KEY": "sk-ant-fake-key-0123456789"})
    bench.config(claude_config(claude_cli, attempts=2)
                 + "\n[worker]\nlease_ttl_seconds = 3\npoll_seconds = 0.2\n")
    anthropic.script = Script([[Call("Bash", {"command": COMMAND, "description": "wait"})],
                               [Text("done")]])
    task = bench.submit("Wait a long time")
    run = bench.cli("run", "start", task, "--agent", "claude", "--detach", "--json").json()
    environment = {**os.environ, **GIT_IDENTITY, **bench.env, "AGENTCTL_HOME": str(bench.home)}
    environment.pop("AGENTCTL_CONFIG", None)
    worker = subprocess.Popen([AGENTCTL, "worker"], cwd=root, env=environment,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: processes_matching(SLEEP)), "the agent never ran its command"
        agent = processes_matching(str(claude_cli))
        assert agent
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    assert wait_for(lambda: not processes_matching(SLEEP) and not processes_matching(
        str(claude_cli)), within=60), "the agent's process tree outlived its worker"

    anthropic.script = Script([[Text("nothing to do this time")]])
    bench.cli("worker", "--once", timeout=300)
    tree = bench.tree(run["runId"])
    statuses = [attempt["status"] for attempt in tree["attempts"]]
    assert statuses == ["LEASE_EXPIRED", "COMPLETED"] or statuses[0] == "LEASE_EXPIRED", statuses
    second = tree["attempts"][1]["steps"]
    assert not any(step["toolCall"] and SLEEP in step["toolCall"]["argumentsJson"]
                   for step in second)
    assert tree["verdict"] is not None
    # The dead worker could not remove its attempt's private directory: the test does.
    first = tree["attempts"][0]["steps"][0]
    assert first["type"] == "PREPARE_WORKSPACE"
    shutil.rmtree(first["attributes"]["path"], ignore_errors=True)
