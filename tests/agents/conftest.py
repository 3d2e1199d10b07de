"""The agent tier: the real Claude Code, Codex, Copilot and Gemini CLIs, pinned, installed once
into a cache (Copilot's unpacked package too, `copilot_cache`).

The CLIs come from npm (`npm install` into `~/.cache/agentctl-test-agents/<cli>-<version>`, or
`$AGENTCTL_TEST_AGENTS`), reused when present: installing them is part of the test run and
never a reason to skip. The model vendors' APIs are the one thing faked (`fake_models`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import socket
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentctl.services.admin.demo import prepare
from tests.agents.fake_models import FakeModel, anthropic_server, openai_server
from tests.cli_runner import invoke
from tests.conftest import Result
from tests.e2e.runs_support import runs_in_process

CLAUDE = ("@anthropic-ai/claude-code", "2.1.197", "claude")
# The newest Claude Code release checked (`npm view @anthropic-ai/claude-code version`): the
# first with PreSkillShellCommand. AGENTCTL_TEST_CLAUDE=newest runs the Claude tests on it,
# =both on each (twice the Claude tier's time); the default is the pinned release.
CLAUDE_NEWEST = ("@anthropic-ai/claude-code", "2.1.332", "claude")
CLAUDE_RELEASES = {"pinned": (CLAUDE,), "newest": (CLAUDE_NEWEST,),
                   "both": (CLAUDE, CLAUDE_NEWEST)}
CODEX = ("@openai/codex", "0.171.0", "codex")
COPILOT = ("@github/copilot", "1.0.102", "copilot")
GEMINI = ("@google/gemini-cli", "0.61.0", "gemini")
OPENCODE = ("opencode-ai", "1.18.33", "opencode")


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


def claude_releases() -> tuple[tuple[str, str, str], ...]:
    chosen = os.environ.get("AGENTCTL_TEST_CLAUDE") or "pinned"
    if chosen not in CLAUDE_RELEASES:
        raise pytest.UsageError(f"AGENTCTL_TEST_CLAUDE={chosen!r}: expected "
                                f"{', '.join(CLAUDE_RELEASES)}")
    return CLAUDE_RELEASES[chosen]


@pytest.fixture(scope="session", params=claude_releases(), ids=lambda release: release[1])
def claude_cli(request: pytest.FixtureRequest) -> Path:
    """The Claude Code the claude tests run: the pinned release, or the newest, or each."""
    return install_cli(*request.param)


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    return install_cli(*CODEX)


@pytest.fixture(scope="session")
def copilot_cli() -> Path:
    return install_cli(*COPILOT)


def copilot_cache() -> Path:
    """Copilot CLI's unpacked package (~200 MB on its first start), shared by every test run:
    agentctl is given it as COPILOT_CACHE_HOME."""
    return agents_cache() / "copilot-cache"


@pytest.fixture(scope="session")
def gemini_cli() -> Path:
    return install_cli(*GEMINI)


@pytest.fixture(scope="session")
def opencode_cli() -> Path:
    return install_cli(*OPENCODE)


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
        """The record commands in-process, as a Bench runs them (tests/e2e/runs_support.py);
        runs, replays and workers through the installed command."""
        if runs_in_process(args) and threading.current_thread() is threading.main_thread():
            result = invoke(*args, home=self.home, cwd=self.cwd, env={**self.env, **(env or {})})
        else:
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

    def start(self, task_id: str, agent: str, *flags: str) -> dict[str, Any]:
        result = self.cli("run", "start", task_id, "--agent", agent, *flags, "--json",
                          expect=(0, 1))
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
        """The agent's own tool calls (the sandbox's `net.connect` records are `connections`;
        the model requests its gateway refused, such as Claude Code's unsandboxed `HEAD /`
        warm-up, are `refused_model_requests`)."""
        return [call for call in self.all_calls(run_id)
                if call["toolName"] not in ("net.connect", "model.request")]

    def refused_model_requests(self, run_id: str) -> list[dict[str, Any]]:
        return [call for call in self.all_calls(run_id) if call["toolName"] == "model.request"]

    def connections(self, run_id: str) -> list[dict[str, Any]]:
        return [call for call in self.all_calls(run_id) if call["toolName"] == "net.connect"]

    def all_calls(self, run_id: str) -> list[dict[str, Any]]:
        return [step["toolCall"] for step in self.steps(run_id) if step["toolCall"]]


@dataclass
class EscapeProbe:
    """A command the guard allows (`python3 *`) that tries to leave the sandbox from inside the
    agent CLI's own process tree: write the original repository, the state home and the host's
    /tmp, read a planted key in the user's home, reach a listener on the host's loopback. Each
    attempt prints what happened; the host is checked afterwards."""

    bench: AgentBench
    user_home: Path
    listener: socket.socket
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    # agentctl's own files it also tries to overwrite, with what they held
    kept: dict[Path, bytes] = field(default_factory=dict)

    def keep(self, path: Path) -> None:
        """A file of agentctl's (the compiled hook) the command tries to overwrite as well."""
        self.kept[path] = path.read_bytes()

    @property
    def targets(self) -> list[Path]:
        return [self.bench.repo / f"escaped-{self.tag}.txt",
                self.bench.home / f"escaped-{self.tag}.txt",
                Path("/tmp") / f"agentctl-escaped-{self.tag}.txt"]

    @property
    def secret(self) -> Path:
        return self.user_home / ".ssh" / "id_rsa"

    def command(self) -> str:
        port = self.listener.getsockname()[1]
        script = ("import socket,sys\n"
                  "for p in sys.argv[2:]:\n"
                  " try: open(p,'w').write('x'); print('WROTE',p)\n"
                  " except OSError as e: print('BLOCKED',p,e.errno)\n"
                  "try: print('READ', open(sys.argv[1]+'/.s'+'sh/id'+'_rsa').read())\n"
                  "except OSError as e: print('UNREADABLE', e.errno)\n"
                  f"try: socket.create_connection(('127.0.0.1',{port}),timeout=5); print('REACHED')\n"
                  "except OSError as e: print('UNREACHABLE', e.errno)\n")
        # the key's path is put together inside: the command guard would refuse a command that
        # names it, and this probes the sandbox, not the guard
        return shlex.join(["python3", "-c", script, str(self.user_home),
                           *map(str, [*self.targets, *self.kept])])

    def assert_nothing_escaped(self, output: str) -> None:
        assert "UNREADABLE" in output and "SECRET-KEY" not in output, output
        assert "UNREACHABLE" in output and "REACHED" not in output.replace("UNREACHABLE", "")
        for target in self.targets:
            assert not target.exists(), f"{target} was written from inside the sandbox"
        for path, held in self.kept.items():
            assert f"BLOCKED {path} " in output, output
            assert path.read_bytes() == held, f"{path} was overwritten from inside the sandbox"
        self.listener.settimeout(0)
        with pytest.raises(BlockingIOError):
            self.listener.accept()


@pytest.fixture
def escape_probe(tmp_path: Path, bench: AgentBench) -> Iterator[EscapeProbe]:
    user_home = tmp_path / "user-home"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_rsa").write_text("SECRET-KEY\n")
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        yield EscapeProbe(bench, user_home, listener)
    finally:
        listener.close()


@pytest.fixture(scope="module")
def payments(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo's payments-service repository and its folder, once per module."""
    root = tmp_path_factory.mktemp("agents")
    repository, _plans, _settings = prepare(root)
    return root, repository


def claude_bench(payments: tuple[Path, Path], claude: Path, anthropic: FakeModel,
                 run_agentctl: Any, key: str = "sk-ant-fake-key-0123456789") -> AgentBench:
    """A bench for Claude Code runs against the fake Anthropic API, with `claude_config`."""
    root, repository = payments
    bench = AgentBench(root, repository, run_agentctl, {
        "ANTHROPIC_BASE_URL": anthropic.url, "ANTHROPIC_API_KEY": key})
    bench.config(claude_config(claude))
    return bench


def claude_config(claude: Path, extra: str = "", attempts: int = 1) -> str:
    return (f'[agents.claude]\ncommand = "{claude}"\nmax_turns = 30\n\n'
            '[env]\npassthrough = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]\n\n'
            '[verification]\ncommands = ["python3 -m unittest discover -s tests -t ."]\n'
            'timeout_seconds = 120\n\n'
            '[policy]\nmax_autonomy = "supervised_pr"\n\n'
            f"[budget]\nmax_attempts = {attempts}\nbackoff_initial_seconds = 0\nwall_seconds = 300\n{extra}")
