"""Helpers for the run end-to-end tests: one home and one working folder driven through the CLI.

A `Bench` is built once per module (runs cost about a second each) and the tests read what its
runs left behind; nothing here patches the product, everything goes through the CLI: runs
through the installed command, the record commands (IN_PROCESS) through its entry point in-process.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tests.support.calc import CALC_FILES as CALC_FILES
from tests.support.calc import UNITTEST as UNITTEST
from tests.support.calc import toml_plan as toml_plan

T = TypeVar("T")
R = TypeVar("R")
Doc = dict[str, Any]


def in_parallel(work: Callable[[T], R], items: Iterable[T], workers: int = 3) -> list[R]:
    """`[work(item) for item in items]`, a few at a time: CLI calls spend most of their time
    starting Python, so independent runs overlap well even on two cores."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(work, items))


def diff_of(repo: Path, scratch: Path, change: Callable[[Path], None],
            git: Callable[..., str]) -> str:
    """The diff `change` makes in a scratch clone of `repo` (new files and renames included)."""
    subprocess.run(["git", "clone", "-q", str(repo), str(scratch)], check=True)
    change(scratch)
    git(scratch, "add", "-A")
    return git(scratch, "diff", "--cached", "-M", "--binary") + "\n"


# Commands a Bench runs in the test's own process (tests/cli_runner.py): they read or write
# records and start nothing that outlives them. Runs, replays, workers, pull requests and anything
# else go through the installed command (`run_agentctl`).
IN_PROCESS = {("task", "submit"), ("task", "list"), ("task", "show"), ("task", "cancel"),
              ("session", "start"), ("session", "say"), ("session", "show"),
              ("session", "list"), ("run", "show"), ("run", "list"), ("run", "diff"),
              ("run", "report"), ("verdict", "show"), ("verdict", "explain"),
              ("verdict", "approve"), ("verdict", "reject"), ("events", ""), ("audit", "verify"),
              ("artifact", "list"), ("artifact", "show"), ("artifact", "verify"),
              ("attest", "verify"), ("attest", "pubkey")}


def runs_in_process(args: Sequence[str]) -> bool:
    """Whether `agentctl ARGS` is one of IN_PROCESS (`task submit --run` starts a run: not)."""
    words = [a for a in args if not a.startswith("-")][:2]
    noun, verb = (words + ["", ""])[:2]
    if (noun, verb) == ("task", "submit"):
        return "--run" not in args
    return (noun, verb) in IN_PROCESS or (noun, "") in IN_PROCESS


@dataclass
class Bench:
    """A state home and a working folder (holding `.agentctl.toml` and plans) for one module.

    The commands in IN_PROCESS run in this process (from the main thread): the same entry point
    and the same answers, without an interpreter start each."""

    root: Path
    run_agentctl: Callable[..., Any]
    home: Path = field(init=False)
    cwd: Path = field(init=False)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.cwd = self.root / "cwd"
        self.cwd.mkdir(parents=True, exist_ok=True)

    # --- raw CLI ------------------------------------------------------------------------------
    def cli(self, *args: str, expect: Sequence[int] | None = (0,), **kw: Any) -> Any:
        if runs_in_process(args) and threading.current_thread() is threading.main_thread():
            # not from in_parallel's threads: the call swaps the process's cwd and environment
            from tests.cli_runner import invoke

            kw.pop("timeout", None)
            result = invoke(*args, home=self.home, cwd=self.cwd, **kw)
        else:
            result = self.run_agentctl(*args, home=self.home, cwd=self.cwd, **kw)
        assert "Traceback" not in result.stderr, result.stderr
        if expect is not None:
            assert result.returncode in expect, (args, result.returncode, result.stderr)
        return result

    def json(self, *args: str) -> Any:
        return self.cli(*args, "--json").json()

    def config(self, text: str, name: str = ".agentctl.toml") -> Path:
        path = self.cwd / name
        path.write_text(text)
        return path

    def plan(self, name: str, *steps: Mapping[str, object]) -> Path:
        path = self.cwd / name
        path.write_text(toml_plan(*steps))
        return path

    # --- tasks and runs -----------------------------------------------------------------------
    def submit(self, repo: Path, *flags: str, instruction: str = "fix the thing",
               env: Mapping[str, str] | None = None) -> str:
        """A READY_FOR_RUN task's id."""
        task = self.cli("task", "submit", "--repo", str(repo), "--type", "refactor",
                        "--instruction", instruction, *flags, "--json", env=env).json()
        assert task["status"] == "READY_FOR_RUN", task
        return str(task["taskId"])

    def start(self, task_id: str, agent: str, *flags: str, expect: Sequence[int] = (0, 1),
              env: Mapping[str, str] | None = None) -> Doc:
        """`run start --json` with its exit code under `exitCode`."""
        result = self.cli("run", "start", task_id, "--agent", agent, *flags, "--json",
                          expect=expect, env=env)
        document: Doc = result.json()
        document["exitCode"] = result.returncode
        return document

    def tree(self, run_id: str) -> Doc:
        return dict(self.json("run", "show", run_id, "--tree"))

    def explain(self, run_id: str) -> Doc:
        return dict(self.json("verdict", "explain", run_id))

    def events(self, run_id: str) -> list[Doc]:
        return list(self.json("events", "--run", run_id))

    def artifacts(self, run_id: str) -> list[Doc]:
        return list(self.json("artifact", "list", run_id))

    def artifact_text(self, artifact_id: str) -> str:
        return str(self.cli("artifact", "show", artifact_id).stdout)

    # --- the database, read only --------------------------------------------------------------
    def query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        uri = f"{(self.home / 'agentctl.db').as_uri()}?mode=ro"
        connection = sqlite3.connect(uri, uri=True)
        try:
            return connection.execute(sql, params).fetchall()
        finally:
            connection.close()

    def run_count(self) -> int:
        if not (self.home / "agentctl.db").exists():
            return 0
        return int(self.query("SELECT count(*) FROM run")[0][0])


# --- reading a run tree -----------------------------------------------------------------------

def steps(tree: Doc, attempt: int = -1) -> list[Doc]:
    return list(tree["attempts"][attempt]["steps"])


def tool_steps(tree: Doc) -> list[Doc]:
    return [s for s in steps(tree) if s["toolCall"] is not None]


def step_of(tree: Doc, type_: str) -> Doc:
    matching = [s for s in steps(tree) if s["type"] == type_]
    assert len(matching) == 1, (type_, [s["type"] for s in steps(tree)])
    return matching[0]


def artifact_names(tree: Doc) -> set[str]:
    return {a["name"] for attempt in tree["attempts"] for s in attempt["steps"]
            for a in s["artifacts"]}


def repo_snapshot(repo: Path, git: Callable[..., str]) -> dict[str, object]:
    """Everything a run must leave alone in the user's repository."""
    files = sorted(str(p.relative_to(repo)) for p in _walk(repo))
    return {
        "status": git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        "head": git(repo, "rev-parse", "HEAD"),
        "branches": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "stash": git(repo, "stash", "list"),
        "worktrees": git(repo, "worktree", "list", "--porcelain"),
        "config": (repo / ".git" / "config").read_text(),
        "files": files,
        "contents": {name: (repo / name).read_bytes() for name in files},
    }


def _walk(repo: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if not (Path(folder) == repo and d == ".git")]
        for name in files:
            yield Path(folder) / name


def docstring_fix(repo: Path, tmp_path: Path) -> Path:
    """`fix.diff` in `tmp_path`: a docstring for calc's add, as a clone of `repo` gives it."""
    import subprocess

    from tests.conftest import git

    scratch = tmp_path / "scratch"
    subprocess.run(["git", "clone", "-q", str(repo), str(scratch)], check=True)
    (scratch / "calc" / "__init__.py").write_text(
        "def add(a, b):\n    \"\"\"The sum.\"\"\"\n    return a + b\n")
    (tmp_path / "fix.diff").write_text(git(scratch, "diff") + "\n")
    return tmp_path / "fix.diff"
