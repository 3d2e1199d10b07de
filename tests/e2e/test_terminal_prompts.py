"""Ctrl-C at a question asked at a real terminal (a tmux pane): "cancelled" on a line of its
own, exit 130, nothing stored, and no exception's name on the screen."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import AGENTCTL
from tests.e2e.terminal_support import terminal

QUESTIONS = {
    "init": ("init", "Verify every run with python -m pytest?"),
    "task submit": ("task submit", "What kind of change is it?"),
}


@pytest.mark.parametrize("command", QUESTIONS)
def test_ctrl_c_at_a_question_says_cancelled_on_its_own_line_and_exits_130(
        command: str, tmp_path: Path, repo_maker: Callable[..., Path]) -> None:
    repo = repo_maker(tmp_path / "calc", {"calc.py": "x = 1\n", "tests/conftest.py": "",
                                         "tests/test_calc.py": "def test_x():\n    pass\n"})
    home = tmp_path / "home"
    arguments, question = QUESTIONS[command]
    with terminal(80, repo, {"AGENTCTL_HOME": str(home)}) as term:
        term.type(f"{AGENTCTL} {arguments}; echo \"ex\"it=$?")
        term.wait_for(question, across_lines=True)
        term.keys("C-c")
        screen = term.wait_for("exit=")
    assert "exit=130" in screen, screen
    assert re.search(r"^agentctl: cancelled$", screen, re.MULTILINE), screen
    assert "Interrupt" not in screen and "Traceback" not in screen and "Abort" not in screen
    assert not (repo / ".agentctl.toml").exists()
    listed = subprocess.run([AGENTCTL, "--home", str(home), "task", "list", "--json"],
                            capture_output=True, text=True)
    assert listed.returncode == 0 and listed.stdout.strip() == "[]", listed
