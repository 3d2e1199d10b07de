"""The two times a patch is applied, named apart at a real terminal (a tmux pane, 80 columns):
the agent's own patch (`apply fix.diff`) and the verified tree's fresh checkout of the base;
`verdict explain`'s apply link says it is about the collected patch."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.conftest import AGENTCTL, GIT_IDENTITY
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench, docstring_fix
from tests.e2e.terminal_support import terminal


def test_the_agent_s_patch_and_the_fresh_checkout_are_two_lines_named_apart(
        tmp_path: Path, repo_maker: Any, run_agentctl: Any) -> None:
    repo = repo_maker(tmp_path / "calc", CALC_FILES)
    docstring_fix(repo, tmp_path)
    bench = Bench(tmp_path, run_agentctl)
    task = bench.submit(repo, "--verify", UNITTEST)
    env = {"AGENTCTL_HOME": str(bench.home), **GIT_IDENTITY}
    with terminal(80, tmp_path, env) as term:
        screen, _ = term.run(f"{AGENTCTL} run start {task} --agent patch:{tmp_path}/fix.diff")
    kept = [line for line in screen.splitlines() if line.startswith(("✓", "✗"))]
    assert any(re.match(r"✓ apply fix\.diff  \d", line) for line in kept), screen
    assert any(re.match(r"✓ apply the patch to a fresh checkout of [0-9a-f]{12}  \d", line)
               for line in kept), screen
    assert "patch applies" not in screen
    explained = bench.cli("verdict", "explain", "--no-pager").stdout
    assert re.search(r"✓ apply +the collected patch applies cleanly to [0-9a-f]{12}, giving "
                     r"the workspace's tree", explained), explained
