"""`run show --tree` at a real terminal (a tmux pane): a run stopped with Ctrl-C reads
"cancelled" (no exception's name, no output tail), and a long tree opens the pager."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENTCTL, GIT_IDENTITY
from tests.e2e.runs_support import CALC_FILES, Bench
from tests.e2e.terminal_support import terminal
from tests.e2e.workers_support import wait_until
from tests.support.processes import running

WRITES = 30  # a tree longer than the 60-line screen
WAIT = "import time\nprint('started-the-wait', flush=True)\ntime.sleep(60)\n"


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory, repo_maker: Callable[..., Path],
            run_agentctl: Any) -> dict[str, Any]:
    """A foreground run of many small writes, stopped by Ctrl-C in its long check."""
    root = tmp_path_factory.mktemp("terminal-tree")
    bench = Bench(root, run_agentctl)
    repo = repo_maker(root / "calc", {**CALC_FILES, "wait.py": WAIT})
    plan = bench.plan("plan.toml", *({"tool": "fs.write", "path": f"notes/{n}.txt",
                                      "content": f"{n}\n"} for n in range(WRITES)))
    task = bench.submit(repo, "--verify", "python3 wait.py", instruction="write notes")
    env = {"AGENTCTL_HOME": str(bench.home), **GIT_IDENTITY}
    with terminal(120, bench.cwd, env) as term:
        term.type(f"{AGENTCTL} run start {task} --agent script:{plan}; echo \"ex\"it=$?")
        term.wait_for("verifying: python3 wait.py")  # the live status names the check
        wait_until(lambda: running("python3", "wait.py"), timeout=60,
                   what="the check's process to start")  # Ctrl-C then stops it, not its start
        term.keys("C-c")
        screen = term.wait_for("exit=")
    [run] = bench.json("run", "list", "--task", task)
    return {"bench": bench, "env": env, "run": run["runId"], "screen": screen}


def test_a_run_stopped_by_ctrl_c_reads_cancelled_in_its_tree(stopped: dict[str, Any]) -> None:
    bench: Bench = stopped["bench"]
    with terminal(120, bench.cwd, stopped["env"]) as term:
        shown, code = term.run(f"{AGENTCTL} run show {stopped['run']} --tree --no-pager")
    assert code == 0 and "CANCELLED" in shown, shown
    assert "Interrupt" not in shown and "Traceback" not in shown, shown
    check = shown[shown.index("RUN_VERIFIER"):]
    assert "cancelled" in check.split("\n│   ├──")[0], shown
    assert "started-the-wait" not in shown, shown  # no output tail for a step we stopped
    assert "Interrupt" not in json.dumps(bench.tree(stopped["run"]))


def test_a_long_tree_opens_the_pager_on_a_terminal(stopped: dict[str, Any],
                                                  tmp_path: Path) -> None:
    log = tmp_path / "paged.log"
    pager = f"sh -c 'cat > {log}; echo PAGER-RAN'"
    env = {**stopped["env"], "AGENTCTL_PAGER": pager}
    with terminal(80, stopped["bench"].cwd, env) as term:
        screen, code = term.run(f"{AGENTCTL} run show {stopped['run']} --tree")
        unpaged, _ = term.run(f"{AGENTCTL} run show {stopped['run']} --tree --no-pager")
    assert code == 0 and "PAGER-RAN" in screen, screen
    paged = log.read_text()
    assert len(paged.splitlines()) > 60 and f"notes/{WRITES - 1}.txt" in paged, paged
    assert "PAGER-RAN" not in unpaged and f"notes/{WRITES - 1}.txt" in unpaged
