"""`pr create` builds its commit in the user's own repository from the patch alone: a
`.gitattributes` filter the patch adds never runs while it does (the agent's workspace `.git`,
where it could have planted hooks or an fsmonitor, is never involved at all; the user's own
repository is out of the sandbox's reach)."""

from __future__ import annotations

from pathlib import Path

import git

from agentctl.execution.pull_requests.pr_branch import build_commit, create_branch
from tests.conftest import git as run_git
from tests.conftest import make_repo

PATCH = """\
diff --git a/.gitattributes b/.gitattributes
new file mode 100644
--- /dev/null
+++ b/.gitattributes
@@ -0,0 +1 @@
+* filter=x
diff --git a/f.txt b/f.txt
--- a/f.txt
+++ b/f.txt
@@ -1 +1 @@
-a
+b
"""


def test_a_filter_the_patch_names_never_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "user", {"f.txt": "a\n"})
    ran = tmp_path / "ran"
    # The user's repository happens to define the filter the patch asks for.
    run_git(repo, "config", "filter.x.clean", f"sh -c 'touch {ran}; cat'")
    run_git(repo, "config", "filter.x.smudge", f"sh -c 'touch {ran}; cat'")
    patch = tmp_path / "run.diff"
    patch.write_text(PATCH)
    base = run_git(repo, "rev-parse", "HEAD").strip()

    handle = git.Repo(repo)
    commit = build_commit(handle, base_commit=base, patch=patch, message="agentctl: run",
                          date="@1700000000 +0000")
    create_branch(handle, "agentctl/run", commit)

    assert not ran.exists()
    assert run_git(repo, "show", f"{commit}:f.txt") == "b"
    assert run_git(repo, "show", f"{commit}:.gitattributes") == "* filter=x"


def test_building_the_pr_commit_again_gives_the_same_commit(tmp_path: Path) -> None:
    """A retried `pr create` pushes the commit that is already there, not a rival one."""
    repo = make_repo(tmp_path / "user", {"f.txt": "a\n"})
    patch = tmp_path / "run.diff"
    patch.write_text("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n")
    base = run_git(repo, "rev-parse", "HEAD").strip()
    handle = git.Repo(repo)
    first, second = (build_commit(handle, base_commit=base, patch=patch, message="m",
                                  date="@1700000000 +0000") for _ in range(2))
    assert first == second
    create_branch(handle, "agentctl/run", first)
    create_branch(handle, "agentctl/run", second)  # already there: left alone
    assert run_git(repo, "rev-parse", "agentctl/run").strip() == first
