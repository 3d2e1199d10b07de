"""The agent tier: the real Claude Code and Codex CLIs, pinned, installed once into a cache.

The CLIs come from npm (`npm install` into `~/.cache/agentctl-test-agents/<cli>-<version>`, or
`$AGENTCTL_TEST_AGENTS`), reused when present: installing them is part of the test run and
never a reason to skip. The model vendors' APIs are the one thing faked (`fake_models`).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentctl.services.demo import prepare
from tests.agents.fake_models import FakeModel, anthropic_server, openai_server
from tests.conftest import Result

CLAUDE = ("@anthropic-ai/claude-code", "2.1.197", "claude")
CODEX = ("@openai/codex", "0.171.0", "codex")


def agents_cache() -> Path:
    return Path(os.environ.get("AGENTCTL_TEST_AGENTS")
                or Path.home() / ".cache" / "agentctl-test-agents")


def install_cli(package: str, version: str, binary: str) -> Path:
    """The pinned CLI's executable, installed with npm under a lock (xdist workers share it)."""
    cache = agents_cache()
    cache.mkdir(parents=True, exist_ok=True)
    prefix = cache / f"{binary}-{version}"
    executable = prefix / "node_modules" / ".bin" / binary
    manifest = prefix / "node_modules" / Path(package) / "package.json"
    with open(cache / f".{binary}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (executable.exists() and manifest.is_file()
                and json.loads(manifest.read_text()).get("version") == version):
            prefix.mkdir(exist_ok=True)
            subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                            "--save-exact", f"{package}@{version}"], check=True,
                           capture_output=True, timeout=900)
    return executable


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    return install_cli(*CLAUDE)


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    return install_cli(*CODEX)


@pytest.fixture(scope="module")
def anthropic() -> Iterator[FakeModel]:
    server = anthropic_server()
    yield server
    server.close()


@pytest.fixture(scope="module")
def openai() -> Iterator[FakeModel]:
    server = openai_server()
    yield server
    server.close()


@dataclass
class AgentBench:
    """One module's state home, working folder and the demo's payments-service repository."""

    root: Path
    repo: Path
    run_agentctl: Callable[..., Result]
    env: dict[str, str]

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def cwd(self) -> Path:
        return self.root

    def cli(self, *args: str, expect: tuple[int, ...] | None = (0,), timeout: float = 240,
            env: dict[str, str] | None = None) -> Result:
        result = self.run_agentctl(*args, home=self.home, cwd=self.cwd,
                                   env={**self.env, **(env or {})}, timeout=timeout)
        assert "Traceback" not in result.stderr, result.stderr
        if expect is not None:
            assert result.returncode in expect, (args, result.returncode, result.stderr)
        return result

    def config(self, text: str) -> None:
        (self.root / ".agentctl.toml").write_text(text)

    def submit(self, instruction: str, *flags: str) -> str:
        task = self.cli("task", "submit", "--repo", str(self.repo), "--type", "api_migration",
                        "--instruction", instruction, "--autonomy", "supervised_pr", *flags,
                        "--json").json()
        assert isinstance(task, dict) and task["status"] == "READY_FOR_RUN", task
        return str(task["taskId"])

    def start(self, task_id: str, agent: str) -> dict[str, Any]:
        result = self.cli("run", "start", task_id, "--agent", agent, "--json", expect=(0, 1))
        document = result.json()
        assert isinstance(document, dict)
        document["exitCode"] = result.returncode
        return document

    def json(self, *args: str) -> Any:
        return self.cli(*args, "--json").json()

    def tree(self, run_id: str) -> dict[str, Any]:
        return dict(self.json("run", "show", run_id, "--tree"))

    def steps(self, run_id: str) -> list[dict[str, Any]]:
        return [step for attempt in self.tree(run_id)["attempts"] for step in attempt["steps"]]

    def calls(self, run_id: str) -> list[dict[str, Any]]:
        return [step["toolCall"] for step in self.steps(run_id) if step["toolCall"]]


@pytest.fixture(scope="module")
def payments(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo's payments-service repository and its folder, once per module."""
    root = tmp_path_factory.mktemp("agents")
    repository, _plans, _settings = prepare(root)
    return root, repository


def claude_config(claude: Path, extra: str = "", attempts: int = 1) -> str:
    return (f'[agents.claude]\ncommand = "{claude}"\nmax_turns = 30\n\n'
            '[env]\npassthrough = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]\n\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n'
            'timeout_seconds = 120\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            f"[budget]\nmax_attempts = {attempts}\nbackoff_initial_seconds = 0\nwall_seconds = 300\n{extra}")
