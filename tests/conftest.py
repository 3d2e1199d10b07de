"""Shared fixtures: throw-away git repositories, a throw-away state home, the installed CLI."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.pg_server import PostgresServer
from tests.support.installed import AGENTCTL as AGENTCTL
from tests.support.installed import GIT_IDENTITY as GIT_IDENTITY
from tests.support.installed import Result as Result
from tests.support.installed import run_installed

if TYPE_CHECKING:
    from agentctl.home import Home as StoreHome

# a test near its timeout writes the processes below it to its captured stderr
pytest_plugins = ["tests.support.hang_report"]


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
        env={**os.environ, **GIT_IDENTITY}, timeout=60,
    )
    return result.stdout.strip()


def make_repo(path: Path, files: Mapping[str, str | bytes], *, branch: str = "main") -> Path:
    """A git repository at `path` with `files` committed on `branch`."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True)
    for name, content in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial commit")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small repository with a package, a test, a config module and a CI workflow."""
    return make_repo(tmp_path / "service", {
        "README.md": "# service\n",
        "src/app.py": "def greet(name):\n    return f'hello {name}'\n",
        "src/config/settings.py": "TIMEOUT = 30\n",
        "tests/test_app.py": "from src.app import greet\n\n\ndef test_greet():\n"
                             "    assert greet('x') == 'hello x'\n",
        ".github/workflows/deploy.yml": "name: deploy\non: push\n",
    })


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def agentctl(home: Path, tmp_path: Path) -> Callable[..., Result]:
    """Run the installed `agentctl` with a throw-away home, in a folder with no config."""
    workdir = tmp_path / "cwd"
    workdir.mkdir(exist_ok=True)

    def run(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None,
            timeout: float = 120, input: str | None = None) -> Result:
        return run_installed(*args, home=home, cwd=cwd or workdir, env=env, timeout=timeout,
                             input=input)

    return run


@pytest.fixture(scope="session")
def repo_maker() -> Callable[..., Path]:
    """`make_repo` as a fixture, for tests and module-scoped setups that build their own repos."""
    return make_repo


@pytest.fixture(scope="session")
def run_git() -> Callable[..., str]:
    """`git(repo, *args)` as a fixture."""
    return git


@pytest.fixture(scope="session")
def run_agentctl() -> Callable[..., Result]:
    """`run_agentctl(*args, home=..., cwd=...)`: the installed CLI against an explicit home.

    The `agentctl` fixture is per test; this one also serves module-scoped homes built once.
    """
    return run_installed


@pytest.fixture
def cli(home: Path, tmp_path: Path) -> Callable[..., Result]:
    """`agentctl` run in this process (tests/cli_runner.py), as the `agentctl` fixture runs the
    installed command: for tests that only check help, bad input or config."""
    from tests.cli_runner import invoke

    workdir = tmp_path / "cwd"
    workdir.mkdir(exist_ok=True)

    def run(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None,
            input: str | None = None) -> Result:
        return invoke(*args, home=home, cwd=cwd or workdir, env=env, input=input)

    return run


@pytest.fixture(scope="session")
def run_cli() -> Callable[..., Result]:
    """`run_cli(*args, home=..., cwd=...)`: `run_agentctl`, in this process."""
    from tests.cli_runner import invoke

    return invoke


@pytest.fixture(scope="session")
def agentctl_executable() -> str:
    """The path of the installed `agentctl`, for tests that start it with Popen."""
    return AGENTCTL


# --- stores: every store-touching test runs on SQLite and on PostgreSQL ---------------------

@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL 15 server for this test process (started here, never skipped)."""
    server = PostgresServer().start()
    yield server
    server.destroy()


def _needs_postgres(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return "postgres" in getattr(item, "fixturenames", ()) or "postgresql" in params


@pytest.fixture(scope="session", autouse=True)
def _postgres_before_any_test(request: pytest.FixtureRequest) -> None:
    """Start the server before the first test when any selected test needs it: a pipeline run
    makes this process a child subreaper and kills the new descendants of its phases, and a
    server started after that would be one (its backends killed mid-query)."""
    if any(_needs_postgres(item) for item in request.session.items):
        request.getfixturevalue("postgres")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_home(request: pytest.FixtureRequest, tmp_path: Path) -> StoreHome:
    """A state home on each store: the embedded SQLite file, or a new PostgreSQL database."""
    from agentctl.home import Home, resolve_home

    if request.param == "sqlite":
        return resolve_home(str(tmp_path / "home"))
    url = request.getfixturevalue("postgres").database()
    return Home(root=tmp_path / "home", database_url=url)
