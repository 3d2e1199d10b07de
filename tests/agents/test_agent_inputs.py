"""Bad agent specs and `[agents.*]` config are one line and exit 2, and change nothing; a CLI
that cannot be started is an agent that could not complete, saying why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result


@pytest.fixture
def task(agentctl: Callable[..., Result], repo: Path) -> str:
    result = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                      "--instruction", "fix it", "--json")
    assert result.returncode == 0, result.stderr
    return str(result.json()["taskId"])  # type: ignore[index]


@pytest.mark.parametrize("spec", ["claude:", "codex:two words", "claudex", "claude :x",
                                  "gemini:", "gemini:../x", "gemini:a/b:streamGenerateContent",
                                  "gemini:pro?alt=json"])
def test_a_bad_native_agent_spec_is_one_line_exit_2(agentctl: Callable[..., Result], task: str,
                                                    spec: str) -> None:
    result = agentctl("run", "start", task, "--agent", spec)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert agentctl("run", "list", "--json").json() == []


@pytest.mark.parametrize(("text", "names"), [
    ("[agents.claude]\nmax_turns = 0\n", "agents.claude.max_turns"),
    ("[agents.claude]\nturns = 3\n", "agents.claude.turns"),
    ("[agents.codex]\nextra_args = \"-x\"\n", "agents.codex.extra_args"),
    ("[agents.gemini]\nturns = 3\n", "agents.gemini.turns"),
    ("[budget]\nmax_cost_usd = -1\n", "budget.max_cost_usd"),
])
def test_bad_agents_config_is_one_line_naming_the_key(agentctl: Callable[..., Result],
                                                      tmp_path: Path, repo: Path, text: str,
                                                      names: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    result = agentctl("--config", str(config), "task", "submit", "--repo", str(repo), "--type",
                      "bug_fix", "--instruction", "x")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert names.split(".")[-1] in result.stderr


def test_a_claude_that_cannot_start_could_not_complete(agentctl: Callable[..., Result],
                                                       tmp_path: Path, repo: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[agents.claude]\ncommand = "{tmp_path}/no-such-claude"\n')
    task = agentctl("--config", str(config), "task", "submit", "--repo", str(repo), "--type",
                    "bug_fix", "--instruction", "x", "--json").json()
    result = agentctl("--config", str(config), "run", "start", task["taskId"],  # type: ignore[index]
                      "--agent", "claude", "--json")
    assert result.returncode == 1
    verdict = result.json()["verdict"]  # type: ignore[index]
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert "no-such-claude" in verdict["reasons"][0] and "cannot start" in verdict["reasons"][0]


@pytest.mark.parametrize(("text", "said"), [
    ('[agents.gemini]\ncommand = "{tmp}/no-such-gemini"\n', "no-such-gemini"),
    ('[agents.gemini]\ncommand = "{tmp}/no-such-gemini"\nmodel = "../v1beta/files"\n',
     "cannot be part of Gemini's API path"),
])
def test_a_gemini_that_cannot_start_could_not_complete(agentctl: Callable[..., Result],
                                                       tmp_path: Path, repo: Path, text: str,
                                                       said: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(text.replace("{tmp}", str(tmp_path)))
    task = agentctl("--config", str(config), "task", "submit", "--repo", str(repo), "--type",
                    "bug_fix", "--instruction", "x", "--json").json()
    result = agentctl("--config", str(config), "run", "start", task["taskId"],  # type: ignore[index]
                      "--agent", "gemini", "--json")
    assert result.returncode == 1
    verdict = result.json()["verdict"]  # type: ignore[index]
    assert verdict["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"
    assert said in verdict["reasons"][0] and "cannot start" in verdict["reasons"][0]
