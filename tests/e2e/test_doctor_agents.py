"""`agentctl doctor` names each agent CLI's release (its `--version`, from the command its
`[agents.NAME]` table names) and whether agentctl's agent tests ran that release: the real
pinned Claude Code and Codex, a CLI of a release never tested, one missing, one that names no
release. Never a traceback, and a missing or untested CLI only warns."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentctl.domain.agent_clis import AGENT_CLIS
from tests.agents.conftest import CLAUDE, CODEX, install_cli
from tests.conftest import AGENTCTL


def doctor(folder: Path, config: str, *flags: str) -> subprocess.CompletedProcess[str]:
    (folder / ".agentctl.toml").write_text(config)
    done = subprocess.run([AGENTCTL, "doctor", *flags], capture_output=True, text=True,
                          cwd=folder, check=False, timeout=120,
                          env={**os.environ, "AGENTCTL_HOME": str(folder / "home"),
                               "COLUMNS": "200"})
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr  # 1 only for a required part (the sandbox)
    return done


def agents(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {f["part"]: f for f in json.loads(done.stdout) if f["part"] in AGENT_CLIS}


def stub(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture(scope="module")
def pinned() -> tuple[Path, Path]:
    return install_cli(*CLAUDE), install_cli(*CODEX)


def test_the_pinned_claude_code_and_codex_are_named_with_their_release_as_tested(
        tmp_path: Path, pinned: tuple[Path, Path]) -> None:
    claude, codex = pinned
    done = doctor(tmp_path, f'[agents.claude]\ncommand = "{claude}"\n\n'
                            f'[agents.codex]\ncommand = "{codex}"\n', "--json")
    found = agents(done)
    assert found["claude"] == {"part": "claude", "ok": True, "required": False,
                               "version": CLAUDE[1], "tested": True,
                               "detail": f"Claude Code (--agent claude[:MODEL]): {claude} "
                                         f"{CLAUDE[1]}, tested by agentctl"}
    assert (found["codex"]["version"], found["codex"]["tested"]) == (CODEX[1], True)
    text = doctor(tmp_path, f'[agents.claude]\ncommand = "{claude}"\n').stdout
    assert f"✓ claude     Claude Code (--agent claude[:MODEL]): {claude} {CLAUDE[1]}, " \
           "tested by agentctl" in text


def test_an_untested_release_a_missing_cli_and_one_naming_no_release_only_warn(
        tmp_path: Path) -> None:
    newer = stub(tmp_path, "claude", 'echo "9.0.1 (Claude Code)"')
    silent = stub(tmp_path, "codex", "echo 'no idea' >&2; exit 3")
    done = doctor(tmp_path, f'[agents.claude]\ncommand = "{newer}"\n\n'
                            f'[agents.codex]\ncommand = "{silent}"\n', "--json")
    found = agents(done)
    claude = found["claude"]
    assert (claude["ok"], claude["required"], claude["version"], claude["tested"]) == \
        (False, False, "9.0.1", False)
    assert claude["detail"].endswith(
        f"{newer} 9.0.1, not tested by agentctl (tested: {', '.join(AGENT_CLIS['claude'].tested)})")
    assert found["codex"]["detail"] == (f"the Codex CLI (--agent codex[:MODEL]): {silent}: "
                                        "--version named no release (exit 3)")
    assert (found["codex"]["ok"], found["codex"]["version"]) == (False, None)
    gone = tmp_path / "nowhere" / "codex"
    found = agents(doctor(tmp_path, f'[agents.codex]\ncommand = "{gone}"\n', "--json"))
    assert found["codex"]["detail"] == f"the Codex CLI (--agent codex[:MODEL]): {gone}: not found"
    text = doctor(tmp_path, f'[agents.claude]\ncommand = "{newer}"\n').stdout
    assert "! claude     Claude Code" in text and "not tested by agentctl" in text
