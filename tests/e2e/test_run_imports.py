"""A run on SQLite starts without the libraries only other paths need: SQLAlchemy (its writes
run the statements compiled ahead on the stdlib driver, and its import alone was a third of a
run's start-up), the PostgreSQL driver (its import alone costs more than a SQLite run's whole
start-up), GitPython (one `git` process
finds the repository), the native agents' modules (and their model gateway) for another kind of
agent, the PostgreSQL dialect for a new SQLite home, the dialog when nothing is left to ask,
and the text renderer for --json."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agentctl.domain.errors import BadInput
from agentctl.execution.task_repository import default_base_ref, resolve_repository
from tests.conftest import Result


def test_a_run_on_sqlite_imports_neither_sqlalchemy_nor_the_postgresql_driver_nor_gitpython(
        agentctl: Callable[..., Result], repo: Path) -> None:
    done = agentctl("task", "submit", "--repo", str(repo / "src"), "--type", "refactor",
                    "--instruction", "nothing", "--verify", "true", "--run", "--agent", "noop",
                    "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode in (0, 1), done.stderr[-2000:]
    modules = {line.split("|")[-1].strip()
               for line in done.stderr.splitlines() if line.startswith("import time:")}
    imported = {name.split(".")[0] for name in modules}
    assert "agentctl.store.uow" in modules, done.stderr[-3000:]  # the measurement works
    assert not imported & {"sqlalchemy", "alembic", "psycopg", "git"}, imported
    unneeded = {"agentctl.execution.agents.claude", "agentctl.execution.agents.codex",
                "agentctl.cli.render.tasks",
                # the SQL is compiled ahead: neither its source nor the tables' definitions
                "agentctl.store.statements", "agentctl.store.tables",
                # every answer is on the command line: no dialog, no prompts
                "agentctl.cli.dialog", "rich.prompt",
                # a native agent's hooks and model gateway, for claude and codex only
                "agentctl.services.attempts.native_calls", "agentctl.execution.gateway.server"}
    assert not modules & unneeded, modules & unneeded


def test_the_repository_is_the_work_tree_around_the_path_and_never_a_bare_one(
        repo: Path, tmp_path: Path) -> None:
    for inside in (repo, repo / "src", repo / "src" / "app.py", repo / ".git" / "objects"):
        found = resolve_repository(str(inside), {}, tmp_path)
        assert found.location == str(repo.resolve()) and not found.is_url
    assert default_base_ref(found) == "main"
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    with pytest.raises(BadInput, match="is a bare repository; expected a work tree"):
        resolve_repository(str(bare), {}, tmp_path)
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(BadInput, match=r"is not a git repository \("):
        resolve_repository(str(plain), {}, tmp_path)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach"], check=True)
    with pytest.raises(BadInput, match="is on a detached HEAD; pass --base REF"):
        default_base_ref(found)
