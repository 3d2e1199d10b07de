"""`task submit --run` with a cold tree cache, through the installed command: the base is
checked out into the cache while the task and the run are being stored (a fill started before
the run exists), and the run then works on views of that one entry."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from agentctl.execution import overlay
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
