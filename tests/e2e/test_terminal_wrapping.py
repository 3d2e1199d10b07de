"""What a long line looks like at a real 80-column terminal (a tmux pane): a row's text that
does not fit wraps under that text, never back to column 0, so the first column stays a column."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import AGENTCTL, GIT_IDENTITY
from tests.e2e.terminal_support import terminal

MARKS = ("✓", "✗", "!")


def test_doctor_wraps_a_long_detail_under_its_own_text_at_80_columns(tmp_path: Path) -> None:
    home = tmp_path / ("a-home-whose-name-is-long-enough-to-wrap-" * 2)  # the store's line
    env = {"AGENTCTL_HOME": str(home), **GIT_IDENTITY}
    with terminal(80, tmp_path, env) as term:
        screen, code = term.run(f"{AGENTCTL} doctor")
    lines = [line for line in screen.splitlines() if line]
    rows = [line for line in lines if line.startswith(MARKS)]
    assert [row.split()[1] for row in rows] == ["sandbox", "views", "claude", "codex",
                                                "store", "forge"], screen
    assert code in (0, 1), screen
    assert all(len(line) <= 80 for line in lines), screen
    following = [line for line in lines if not line.startswith(MARKS)]
    assert following, screen  # the long home did wrap
    indent = len(re.match(r"\S \S+\s+", rows[0]).group(0))  # type: ignore[union-attr]
    assert all(re.match(rf"^ {{{indent}}}\S", line) for line in following), screen
    store = screen[screen.index("store "):]
    assert str(home) in re.sub(r"\n +", "", store.split("✓", 1)[0]), screen
