"""`agentctl cache show|clear` through the installed command, on a home a real run filled: one
checked-out base in `trees/`, one baseline in `baselines/` (a custom task with the baseline
always on, a `patch:` agent and a grep as its check), or, with the tree cache off, the base's
checkout kept beside the baseline. Each test works on its own copy of it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.filesize import decimal

from agentctl.execution.workspaces.base_checkouts import BaseCheckout
from agentctl.execution.workspaces.cache_fill import builder, cache_key
from agentctl.execution.workspaces.tree_cache import TreeCache, acquire, remove_tree
from agentctl.execution.workspaces.workspace import create_attempt_dirs
from tests.conftest import AGENTCTL, GIT_IDENTITY, Result, git, make_repo
from tests.e2e.conftest import one_error_line
from tests.e2e.terminal_support import terminal
from tests.e2e.test_help import probe
from tests.machine import unavailable

VERIFY = "grep -qx 'x = 2' app.py"  # fails on the base, passes with the patch


@dataclass(frozen=True)
class Filled:
    """A home one run left its caches in, and what to run again on it."""

    template: Path
    cwd: Path
    task_id: str
    repository: str
    base_commit: str


def fill(root: Path, run_agentctl: Callable[..., Result], config: str) -> Filled:
    """A run of a custom task with the baseline always on, under `config`, into `root/home`."""
    from agentctl.execution.workspaces import overlay

    if not overlay.supported(root):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")
    repo = make_repo(root / "repo", {"app.py": "x = 1\n"})
    (repo / "app.py").write_text("x = 2\n")
    cwd = root / "cwd"
    cwd.mkdir()
    (cwd / "change.diff").write_text(git(repo, "diff") + "\n")
    git(repo, "checkout", "-q", "--", "app.py")
    (cwd / ".agentctl.toml").write_text('[verification]\nbaseline = "always"\n' + config)
    template = root / "home"
    ran = run_agentctl("task", "submit", "--repo", str(repo), "--base", "main", "--type",
                       "custom", "--instruction", "bump x", "--verify", VERIFY, "--run",
                       "--agent", "patch:change.diff", "--json", home=template, cwd=cwd,
                       timeout=300)
    assert ran.returncode == 0, ran.stderr
    run: Any = ran.json()
    assert run["verdict"]["status"] == "SUCCESS", run
    task: Any = run_agentctl("task", "show", run["taskId"], "--json", home=template,
                             cwd=cwd).json()
    return Filled(template, cwd, run["taskId"], task["repository"], run["baseCommit"])


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory,
           run_agentctl: Callable[..., Result]) -> Filled:
    """One checked-out base in `trees/`, one baseline in `baselines/`."""
    return fill(tmp_path_factory.mktemp("cache-cli"), run_agentctl, "")


@pytest.fixture(scope="module")
def without_views(tmp_path_factory: pytest.TempPathFactory,
                  run_agentctl: Callable[..., Result]) -> Filled:
    """The tree cache off: no tree, one baseline and the base's checkout kept beside it."""
    return fill(tmp_path_factory.mktemp("cache-cli-off"), run_agentctl,
                "[store]\ntree_cache_mb = 0\n")


def copy_of(filled: Filled, tmp_path: Path) -> Path:
    """A private copy of the filled home."""
    copy = tmp_path / "home"
    shutil.copytree(filled.template, copy, symlinks=True)
    return copy


@pytest.fixture
def home(filled: Filled, tmp_path: Path) -> Path:
    return copy_of(filled, tmp_path)


def cache_json(run_agentctl: Callable[..., Result], home: Path, cwd: Path, *args: str) -> Any:
    """`agentctl cache ARGS --json` on `home`: its document (exit 0)."""
    result = run_agentctl("cache", *args, "--json", home=home, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result.json()


@pytest.fixture
def cache(filled: Filled, home: Path,
          run_agentctl: Callable[..., Result]) -> Callable[..., Any]:
    """`cache(*args)`: `agentctl cache ARGS --json` on the copy of `filled`."""
    return lambda *args: cache_json(run_agentctl, home, filled.cwd, *args)


def tree_entries(home: Path) -> list[Path]:
    return [p for p in (home / "trees").iterdir() if p.is_dir() and p.name != "tmp"]


def baseline_files(home: Path) -> list[Path]:
    return list((home / "baselines").glob("*/*.json"))


@pytest.fixture
def pinned(home: Path, filled: Filled, tmp_path: Path) -> Iterator[Path]:
    """The home's tree entry held as a live run holds it (the same `acquire` and builder), until
    the end. In this copy of the home the copied entry is not where it was built, so it is
    built again first, as for a run."""
    (entry,) = tree_entries(home)
    assert entry.name == cache_key(filled.repository, filled.base_commit)
    build = builder(filled.repository, filled.base_commit, is_url=False,
                    home=tmp_path / "git-home", should_stop=None)
    held = acquire(TreeCache(home / "trees", 2**30), entry.name, build)
    try:
        yield entry
    finally:
        held.release()


def test_cache_show_reports_the_tree_and_the_baseline_a_run_left(
        cache: Callable[..., Any], home: Path) -> None:
    shown = cache("show")
    assert shown["trees"]["folder"] == str(home / "trees")
    assert shown["trees"]["entries"] == 1 and shown["trees"]["sizeBytes"] > 0
    assert shown["trees"]["pinned"] == 0 and shown["trees"]["enabled"] is True
    assert shown["trees"]["bound"] == {"configKey": "store.tree_cache_mb", "value": 10240,
                                       "sizeBytes": 10240 * 2**20}
    assert shown["baselines"]["folder"] == str(home / "baselines")
    assert shown["baselines"]["entries"] == 1 and shown["baselines"]["sizeBytes"] > 0


def test_cache_show_reads_the_bound_from_the_config(
        filled: Filled, home: Path, run_agentctl: Callable[..., Result]) -> None:
    config = home.parent / "small.toml"
    config.write_text("[store]\ntree_cache_mb = 0\n")
    shown: Any = run_agentctl("--config", str(config), "cache", "show", "--json", home=home,
                              cwd=filled.cwd).json()
    assert shown["trees"]["bound"]["value"] == 0 and shown["trees"]["enabled"] is False
    assert shown["trees"]["entries"] == 1  # left from when it was on: still shown, clearable


def test_cache_clear_empties_both_and_the_next_run_runs_the_base_again(
        filled: Filled, cache: Callable[..., Any], home: Path,
        run_agentctl: Callable[..., Result]) -> None:
    cleared = cache("clear")
    assert cleared["trees"]["removed"]["entries"] == 1
    assert cleared["trees"]["removed"]["sizeBytes"] > 0
    assert cleared["trees"]["kept"] == {"entries": 0, "sizeBytes": 0}
    assert cleared["baselines"]["removed"]["entries"] == 1
    shown = cache("show")
    assert (shown["trees"]["entries"], shown["baselines"]["entries"]) == (0, 0)
    assert tree_entries(home) == [] and baseline_files(home) == []
    assert list((home / "trees" / "tmp").iterdir()) == []  # nothing half-removed left behind

    again = run_agentctl("run", "start", filled.task_id, "--agent", "patch:change.diff",
                         "--json", home=home, cwd=filled.cwd, timeout=300)
    assert again.returncode == 0, again.stderr
    run: Any = again.json()
    explained: Any = run_agentctl("verdict", "explain", run["runId"], "--json", home=home,
                                  cwd=filled.cwd).json()
    (check,) = explained["classification"]
    assert check["classification"] == "FAIL_TO_PASS"
    assert check["baselineCached"] is False  # run again on the base, not read from the cache
    shown = cache("show")
    assert (shown["trees"]["entries"], shown["baselines"]["entries"]) == (1, 1)


def test_cache_clear_baselines_leaves_the_trees(cache: Callable[..., Any], home: Path) -> None:
    cleared = cache("clear", "--baselines")
    assert cleared["trees"] is None and cleared["baselines"]["removed"]["entries"] == 1
    assert len(tree_entries(home)) == 1 and baseline_files(home) == []


def test_cache_clear_trees_leaves_the_baselines(cache: Callable[..., Any], home: Path) -> None:
    cleared = cache("clear", "--trees")
    assert cleared["baselines"] is None and cleared["trees"]["removed"]["entries"] == 1
    assert tree_entries(home) == [] and len(baseline_files(home)) == 1


def test_a_tree_a_live_run_pins_survives_clear_and_is_reported_kept(
        cache: Callable[..., Any], home: Path, pinned: Path) -> None:
    assert cache("show")["trees"]["pinned"] == 1
    cleared = cache("clear")
    assert cleared["trees"]["removed"]["entries"] == 0
    assert cleared["trees"]["kept"]["entries"] == 1 and cleared["trees"]["kept"]["sizeBytes"] > 0
    assert cleared["baselines"]["removed"]["entries"] == 1  # a baseline is never in use
    assert tree_entries(home) == [pinned] and (pinned / "repo" / "app.py").read_text() == "x = 1\n"


def test_clear_beside_a_live_run_keeps_its_tree_and_the_run_ends_as_usual(
        filled: Filled, tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    """A real run checks its base out into the cache and holds it while its agent waits for
    the word; `cache clear` runs meanwhile, keeps that entry, and the run then verifies its
    patch on it. (A home of its own: a copied entry's index no longer matches its files.)"""
    home, state, cwd = tmp_path / "live-home", tmp_path / "state", tmp_path / "cwd"
    state.mkdir()  # outside the workspace: the sandbox lets the agent read it
    cwd.mkdir()
    (state / "agent.sh").write_text(
        'while [ ! -e "$1" ]; do sleep 0.05; done\nprintf "x = 2\\n" > app.py\n')
    (cwd / ".agentctl.toml").write_text(
        f'[verification]\nbaseline = "always"\n[sandbox]\nwritable = ["{state}"]\n')
    environment = {**os.environ, "AGENTCTL_HOME": str(home), **GIT_IDENTITY}
    environment.pop("AGENTCTL_CONFIG", None)
    go = state / "go"
    run = subprocess.Popen(
        [AGENTCTL, "task", "submit", "--repo", filled.repository, "--base", "main", "--type",
         "custom", "--instruction", "bump x", "--verify", VERIFY, "--run", "--agent",
         f"command:sh {state / 'agent.sh'} {go}", "--json"],
        cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while cache_json(run_agentctl, home, cwd, "show")["trees"]["pinned"] == 0:
            assert run.poll() is None, run.communicate()  # the run has not taken it yet
            time.sleep(0.1)
        cleared = cache_json(run_agentctl, home, cwd, "clear")
        go.touch()
        stdout, stderr = run.communicate(timeout=300)
    finally:
        go.touch()
        if run.poll() is None:
            run.kill()
            run.wait()
    assert cleared["trees"]["kept"]["entries"] == 1, cleared
    assert cleared["trees"]["removed"]["entries"] == 0, cleared
    assert run.returncode == 0, stderr
    assert json.loads(stdout)["verdict"]["status"] == "SUCCESS", stdout
    shown = cache_json(run_agentctl, home, cwd, "show")
    assert shown["trees"]["entries"] == 1 and shown["trees"]["pinned"] == 0


def test_a_tree_is_cleared_once_its_run_lets_go(cache: Callable[..., Any], home: Path) -> None:
    (entry,) = tree_entries(home)
    held = acquire(TreeCache(home / "trees", 2**30), entry.name, lambda _folder: None)
    assert cache("clear", "--trees")["trees"]["kept"]["entries"] == 1
    held.release()
    assert cache("show")["trees"]["pinned"] == 0
    assert cache("clear", "--trees")["trees"]["removed"]["entries"] == 1
    assert tree_entries(home) == []


def test_cache_clear_prints_what_it_removed_and_what_it_kept(
        filled: Filled, home: Path, pinned: Path, run_agentctl: Callable[..., Result]) -> None:
    kept = int((pinned / "size").read_text())  # what the cache counts the entry as
    (baseline,) = baseline_files(home)
    removed = baseline.stat().st_blocks * 512  # on disk, as `du` counts it
    result = run_agentctl("cache", "clear", home=home, cwd=filled.cwd)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"trees      removed 0 entries (0 bytes); kept 1 entry ({decimal(kept)}), in use by a "
        "live run",
        f"baselines  removed 1 entry ({decimal(removed)})"]


def test_base_checkouts_kept_beside_the_baselines_are_shown_and_cleared_with_them(
        without_views: Filled, tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    home = copy_of(without_views, tmp_path)
    checkouts = home / "baselines" / "checkouts"
    shown = cache_json(run_agentctl, home, without_views.cwd, "show")
    assert shown["trees"]["enabled"] is False and shown["trees"]["entries"] == 0
    assert shown["baselines"]["entries"] == 1
    assert shown["baselines"]["checkouts"]["folder"] == str(checkouts)
    assert shown["baselines"]["checkouts"]["entries"] == 1
    assert shown["baselines"]["checkouts"]["sizeBytes"] > 0
    key = cache_key(without_views.repository, without_views.base_commit)
    assert [p.name for p in checkouts.iterdir()] == [key]  # the one a run would claim

    cache_json(run_agentctl, home, without_views.cwd, "clear", "--trees")
    assert [p.name for p in checkouts.iterdir()] == [key]
    cleared = cache_json(run_agentctl, home, without_views.cwd, "clear", "--baselines")
    assert cleared["baselines"]["removed"]["entries"] == 1
    assert cleared["baselines"]["checkouts"]["removed"]["entries"] == 1
    assert cleared["baselines"]["checkouts"]["removed"]["sizeBytes"] > 0
    assert list(checkouts.iterdir()) == [] and baseline_files(home) == []


def test_a_base_checkout_an_attempt_holds_is_left_alone_and_comes_back_after(
        without_views: Filled, tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    home = copy_of(without_views, tmp_path)
    claimed = BaseCheckout(create_attempt_dirs(tmp_path), without_views.repository,
                           without_views.base_commit, root=home / "baselines" / "checkouts")
    path = claimed.ensure()  # as an attempt rerunning a test on the base claims it
    assert claimed.reused
    cleared = cache_json(run_agentctl, home, without_views.cwd, "clear")
    assert cleared["baselines"]["checkouts"]["removed"]["entries"] == 0
    assert (path / "app.py").read_text() == "x = 1\n"
    claimed.release()  # given back, clean, for the next run
    shown = cache_json(run_agentctl, home, without_views.cwd, "show")
    assert shown["baselines"]["checkouts"]["entries"] == 1


# A worker building a cache entry: it writes the checkout, then waits for `go` (when given)
# or dies on the spot, killed -9 halfway, as a worker can be.
BUILDER = """
import os, signal, sys, time
from pathlib import Path
from agentctl.execution.workspaces.tree_cache import TreeCache, acquire

root, key, go = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]

def build(folder: Path) -> None:
    (folder / "repo").mkdir()
    (folder / "repo" / "app.py").write_text("x = 1\\n" * 20000)
    (root / f"{key}.started").touch()
    while go and not Path(go[0]).exists():
        time.sleep(0.05)
    if not go:
        os.kill(os.getpid(), signal.SIGKILL)

acquire(TreeCache(root, 2**30), key, build).release()
"""


def start_builder(trees: Path, key: str, *go: Path) -> subprocess.Popen[str]:
    builder = subprocess.Popen([sys.executable, "-c", BUILDER, str(trees), key, *map(str, go)],
                               text=True, stderr=subprocess.PIPE)
    started = trees / f"{key}.started"
    while not started.exists():  # the checkout is written
        if builder.poll() is not None:
            assert started.exists(), builder.communicate()
        time.sleep(0.05)
    return builder


def test_what_a_dead_builder_left_is_shown_and_cleared_but_a_live_builders_is_not(
        tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    home, trees = tmp_path / "home", tmp_path / "home" / "trees"
    dead, live = "d" * 32, "e" * 32
    start_builder(trees, dead).wait()  # killed halfway: its folder stays in tmp/
    go = tmp_path / "go"
    builder = start_builder(trees, live, go)
    try:
        shown = cache_json(run_agentctl, home, tmp_path, "show")
        assert shown["trees"]["entries"] == 0
        assert shown["trees"]["leftovers"]["entries"] == 1
        assert shown["trees"]["leftovers"]["sizeBytes"] > 120_000
        text = run_agentctl("cache", "show", home=home, cwd=tmp_path).stdout
        assert "trees/tmp/ holds 1 unfinished checkout (" in text, text
        cleared = cache_json(run_agentctl, home, tmp_path, "clear", "--trees")
        assert cleared["trees"]["leftovers"]["entries"] == 1, cleared
        left = [p.name.partition(".")[0] for p in (trees / "tmp").iterdir()]
        assert left == [live]  # the live builder's folder, still being written
    finally:
        go.touch()
        builder.wait(timeout=120)
    assert builder.returncode == 0, builder.stderr
    assert (trees / live / "repo" / "app.py").exists()  # it finished and put its entry in place
    shown = cache_json(run_agentctl, home, tmp_path, "show")
    assert shown["trees"]["entries"] == 1 and shown["trees"]["leftovers"]["entries"] == 0


def test_cache_show_on_a_home_that_does_not_exist_shows_empty_caches_and_creates_nothing(
        tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    absent = tmp_path / "never"
    shown = run_agentctl("cache", "show", "--json", home=absent, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    document: Any = shown.json()
    for name in ("trees", "baselines"):
        assert (document[name]["entries"], document[name]["sizeBytes"]) == (0, 0)
    assert document["trees"]["pinned"] == 0
    cleared = run_agentctl("cache", "clear", home=absent, cwd=tmp_path)
    assert cleared.returncode == 0, cleared.stderr
    assert not absent.exists()


@pytest.mark.parametrize("args", [("clear", "--all"), ("show", "--trees"), ("purge",)])
def test_bad_input_to_cache_is_one_line_exit_2_and_changes_nothing(
        args: tuple[str, ...], filled: Filled, home: Path,
        run_agentctl: Callable[..., Result]) -> None:
    result = run_agentctl("cache", *args, home=home, cwd=filled.cwd)
    assert result.returncode == 2 and result.stdout == ""
    one_error_line(result.stderr)
    assert len(tree_entries(home)) == 1 and len(baseline_files(home)) == 1


def test_cache_commands_load_no_orm_git_or_diff_library(home: Path) -> None:
    """They need no store: a `cache show` costs no SQLAlchemy import."""
    paths = [["cache", "show"], ["cache", "show", "--json"], ["cache", "clear", "--json"]]
    for report in probe(paths, env={"AGENTCTL_HOME": str(home)}):
        command = " ".join(report["path"])
        assert report["code"] in (0, None), (command, report["err"])
        assert report["heavy"] == [], f"'agentctl {command}' imported {report['heavy']}"
    assert tree_entries(home) == []  # the probe really ran `clear`


def test_cache_show_fits_an_80_column_terminal(filled: Filled, home: Path) -> None:
    short = Path(tempfile.mkdtemp(prefix="cache-")) / "home"  # a folder fits a line of its own
    try:
        shutil.copytree(home, short, symlinks=True)
        with terminal(80, filled.cwd, {"AGENTCTL_HOME": str(short), **GIT_IDENTITY}) as term:
            screen, code = term.run("agentctl cache show")
    finally:
        remove_tree(short.parent)
    assert code == 0, screen
    lines = screen.splitlines()
    assert all(len(line) <= 80 for line in lines), screen  # a wrapped line is joined: longer
    assert lines[0].split() == ["CACHE", "ENTRIES", "SIZE", "PINNED", "BOUND"]
    assert lines[1].split()[:2] == ["trees", "1"], screen
    assert "[store] tree_cache_mb = 10240" in lines[1], screen
    assert lines[2].strip() == str(short / "trees"), screen
    assert lines[3].split()[:2] == ["baselines", "1"], screen
    assert lines[4].strip() == str(short / "baselines"), screen
    assert lines[5].split()[:2] == ["checkouts", "0"], screen
    assert lines[6].strip() == str(short / "baselines" / "checkouts"), screen
