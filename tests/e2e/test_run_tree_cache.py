"""`task submit --run` with a cold tree cache, through the installed command: the base is
checked out into the cache while the task and the run are being stored (a fill started before
the run exists), and the run then works on views of that one entry."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from agentctl.execution.workspaces import overlay
from tests.conftest import Result, git, make_repo
from tests.machine import unavailable


def test_a_run_submitted_on_a_cold_cache_fills_it_once_and_verifies_base_plus_patch(
        tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    if not overlay.supported(tmp_path):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n", "docs/readme.md": "hi\n"})
    diff = tmp_path / "change.diff"
    (repo / "app.py").write_text("x = 2\n")
    diff.write_text(git(repo, "diff") + "\n")
    git(repo, "checkout", "-q", "--", "app.py")
    home = tmp_path / "home"

    result = run_agentctl("task", "submit", "--repo", str(repo), "--base", "main",
                          "--type", "custom", "--instruction", "bump x", "--verify",
                          "grep -qx 'x = 2' app.py", "--run", "--agent", f"patch:{diff}",
                          "--json", home=home, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["status"] == "COMPLETED" and run["verdict"]["status"] == "SUCCESS", run
    trees = home / "trees"
    entries = [p for p in trees.iterdir() if p.is_dir() and p.name != "tmp"]
    assert len(entries) == 1  # built once, by the early fill or the attempt, never both
    assert list((trees / "tmp").iterdir()) == []
    assert (entries[0] / "repo" / "app.py").read_text() == "x = 1\n"  # the base, unpatched


def test_a_copied_home_builds_its_cached_base_again_and_verifies_as_before(
        tmp_path: Path, run_agentctl: Callable[..., Result]) -> None:
    """A home copied with its cache (`cp -a`, a restored backup): the entry's files are new
    inodes its index does not know, so git took every file for changed and refused to apply
    the patch (FAILED: "does not match index"); the entry is now built again in the copy and
    the one in the original is left as it was."""
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    diff = tmp_path / "change.diff"
    (repo / "app.py").write_text("x = 2\n")
    diff.write_text(git(repo, "diff") + "\n")
    git(repo, "checkout", "-q", "--", "app.py")
    submit = ("task", "submit", "--repo", str(repo), "--base", "main", "--type", "custom",
              "--instruction", "bump x", "--verify", "grep -qx 'x = 2' app.py", "--run",
              "--agent", f"patch:{diff}", "--json")
    original = tmp_path / "home"
    assert run_agentctl(*submit, home=original, cwd=tmp_path).returncode == 0
    (entry,) = [p for p in (original / "trees").iterdir() if p.is_dir() and p.name != "tmp"]
    built_in = entry.stat().st_ino
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(original), str(copy)], check=True)

    result = run_agentctl(*submit, home=copy, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["status"] == "COMPLETED" and run["verdict"]["status"] == "SUCCESS", run
    copied_entry = copy / "trees" / entry.name
    assert (copied_entry / "repo" / "app.py").read_text() == "x = 1\n"
    assert (copied_entry / "place").read_text() == f"{copied_entry.stat().st_ino}\n"
    assert entry.stat().st_ino == built_in  # the original's entry untouched
    assert run_agentctl(*submit, home=original, cwd=tmp_path).returncode == 0
