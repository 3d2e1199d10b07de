"""What agents and people write is shown, never obeyed: no escape sequence or carriage return
from an instruction, a path or an error reaches the terminal as a control character."""

from __future__ import annotations

import json
from pathlib import Path

ERASE = "\x1b[2K\r\x1b[1A"  # erase the line, go to its start, go up: hides what came before


def test_control_characters_in_an_instruction_and_an_agent_path_are_shown_escaped(
        agentctl, repo: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text("[[step]]\ntool = \"fs.write\"\n"
                    f"path = {json.dumps('src/evil' + ERASE + '.txt')}\ncontent = \"x\"\n\n"
                    "[[step]]\ntool = \"shell.run\"\ncommand = \"git push origin main\"\n")
    submitted = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                         "--instruction", f"fix{ERASE}it", "--json")
    task_id = submitted.json()["taskId"]  # type: ignore[index]
    started = agentctl("run", "start", task_id, "--agent", f"script:{plan}")

    shown = [agentctl("task", "list"), agentctl("task", "show", task_id),
             agentctl("run", "show", "--tree"), agentctl("verdict", "explain"), started]
    for result in shown:
        assert "\x1b" not in result.stdout + result.stderr
        assert "\r" not in result.stdout
    tree = shown[2].stdout
    assert "\\x1b[2K\\x0d" in tree  # the path, shown for what it is
    assert "DENIED_BY_COMMAND_GUARD" in tree  # and the denial below it still there


def test_an_error_naming_bad_input_prints_its_control_characters_escaped(cli) -> None:
    refused = cli("task", "show", f"task_01ABC{ERASE}")
    assert refused.returncode == 2
    assert "\x1b" not in refused.stderr and refused.stderr.count("\n") == 1
