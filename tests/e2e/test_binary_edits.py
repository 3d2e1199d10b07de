"""A binary file a step wrote is named as binary with its size, in the tree's edits and in
`verdict explain`'s, never as `(+0 −0)` (it has no lines to count)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench

WRITE_BINARY = "python3 -c \"open('logo.bin', 'wb').write(bytes(range(256)) * 8)\""


def test_a_binary_file_a_command_wrote_is_named_binary_with_its_size(
        tmp_path: Path, repo_maker: Any, run_agentctl: Any) -> None:
    repo = repo_maker(tmp_path / "calc", CALC_FILES)
    bench = Bench(tmp_path, run_agentctl)
    task = bench.submit(repo, "--verify", UNITTEST)
    bench.start(task, f"script:{bench.plan('plan.toml', {'tool': 'shell.run', 'command': WRITE_BINARY})}")
    tree = bench.cli("run", "show", "--tree").stdout
    assert re.search(r"edited: logo\.bin \(binary, 2,048 bytes\) ADDED", tree), tree
    assert "logo.bin (+0" not in tree
    explained = bench.cli("verdict", "explain", "--no-pager").stdout
    assert re.search(r"logo\.bin ← step \d+ shell\.run \(binary, 2,048 bytes\)", explained), \
        explained
    steps = [s for s in bench.json("run", "show", "--tree", "--json")["attempts"][0]["steps"]
             if s.get("changedFiles")]
    [change] = steps[0]["changedFiles"]
    assert (change["binary"], change["sizeBytes"]) == (True, 2048)
