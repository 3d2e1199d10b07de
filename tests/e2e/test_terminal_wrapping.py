"""What a long line looks like at a real 80-column terminal (a tmux pane): a row's text that
does not fit wraps under that text, never back to column 0, so the first column stays a column."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.conftest import AGENTCTL, GIT_IDENTITY
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench, docstring_fix
from tests.e2e.terminal_support import terminal

MARKS = ("✓", "✗", "!")


def test_doctor_wraps_a_long_detail_under_its_own_text_at_80_columns(tmp_path: Path) -> None:
    home = tmp_path / ("a-home-whose-name-is-long-enough-to-wrap-" * 2)  # the store's line
    env = {"AGENTCTL_HOME": str(home), **GIT_IDENTITY}
    with terminal(80, tmp_path, env) as term:
        screen, code = term.run(f"{AGENTCTL} doctor")
    lines = [line for line in screen.splitlines() if line]
    rows = [line for line in lines if line.startswith(MARKS)]
    assert [row.split()[1] for row in rows] == ["sandbox", "limits", "views", "claude", "codex",
                                                "copilot", "gemini", "opencode", "hook",
                                                "store", "forge", "start-up"], screen
    assert code in (0, 1), screen
    assert all(len(line) <= 80 for line in lines), screen
    following = [line for line in lines if not line.startswith(MARKS)]
    assert following, screen  # the long home did wrap
    indent = len(re.match(r"\S \S+\s+", rows[0]).group(0))  # type: ignore[union-attr]
    assert all(re.match(rf"^ {{{indent}}}\S", line) for line in following), screen
    store = screen[screen.index("store "):]
    assert str(home) in re.sub(r"\n +", "", store.split("✓", 1)[0]), screen


EXPLAIN_STARTS = re.compile(r"^(intent|verdict|sandbox|classification|reasons|evidence|"
                            r"\d+\. [✓✗] )")


def test_verdict_explain_wraps_each_row_under_its_own_text_at_80_columns(
        tmp_path: Path, repo_maker: Any, run_agentctl: Any) -> None:
    repo = repo_maker(tmp_path / "calc", CALC_FILES)
    docstring_fix(repo, tmp_path)
    bench = Bench(tmp_path, run_agentctl)
    task = bench.submit(repo, "--verify", UNITTEST, instruction="document what add returns "
                        "and why, in words a new reader of the calculator understands")
    bench.start(task, f"patch:{tmp_path}/fix.diff")
    env = {"AGENTCTL_HOME": str(bench.home), **GIT_IDENTITY}
    with terminal(80, tmp_path, env) as term:
        screen, code = term.run(f"{AGENTCTL} verdict explain --no-pager")
    lines = [line for line in screen.splitlines() if line]
    assert code == 0 and any(line.startswith("1. ✓ boundary") for line in lines), screen
    assert all(len(line) <= 80 for line in lines), screen
    assert [line for line in lines if not (EXPLAIN_STARTS.match(line) or line.startswith(" "))
            ] == [], screen
    intent = screen[screen.index("intent"):screen.index("\nverdict")]
    assert re.search(r"^ +\S", intent.splitlines()[1], re.MULTILINE), screen  # it did wrap
    assert "new reader of the calculator understands" in " ".join(intent.split()), screen
