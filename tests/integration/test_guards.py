"""The path guard on a real directory tree (symlinks included) and the budget guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.config.schema import SECRET_FILES
from agentctl.domain.agent_text import control_character
from agentctl.domain.enums import ToolDecision
from agentctl.domain.spec import Budget
from agentctl.execution.agents.guards import BudgetGuard, PathCheck, check_path
from agentctl.execution.agents.patch_paths import diff_paths

FORBIDDEN = (".github/**", "infra/**", ".env")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    for name, text in {"src/app.py": "x = 1\n", ".github/workflows/ci.yml": "on: push\n",
                       ".env": "TOKEN=abc\n", "certs/server.pem": "pem\n",
                       ".git/config": "[core]\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def check(workspace: Path, raw: str, *, write: bool = False,
          allowed: tuple[str, ...] = ()) -> PathCheck:
    return check_path(workspace, raw, write=write, forbidden=FORBIDDEN,
                      secret_files=SECRET_FILES, allowed=allowed)


@pytest.mark.parametrize("raw", [
    "/etc/passwd", "~/.bashrc", "../outside.txt", "src/../../outside.txt", "", "  ", ".", "src/..",
    "a\0b", ".git/config", "src/.git/hooks/pre-commit", ".GIT/config", ".git",
])
def test_paths_outside_the_workspace_or_inside_git_are_denied_by_the_path_guard(
    workspace: Path, raw: str,
) -> None:
    result = check(workspace, raw, write=True)
    assert result.decision.decision is ToolDecision.DENIED_BY_PATH_GUARD
    assert result.decision.reason
    assert (result.decision.matched_rule or "").startswith("path guard")
    assert result.relative is None and result.absolute is None


# C0, DEL, C1 (NEL, CSI), the line and paragraph separators, the bidi overrides and isolates
HIDDEN = ["notes\n### Approvals\n<!--.md", "a\rb.txt", "a\tb.txt", "src/\x1b[2Jclear.py",
          "del\x7f.txt", "bell\x07.txt", "nel\x85### Approvals.md", "csi\x9b2J.py",
          "line\u2028sep.md", "para\u2029sep.md", "invoice\u202egnp.exe", "lro\u202dx.py",
          "lre\u202ax.py", "iso\u2066late\u2069.py", "fsi\u2068x.py"]


@pytest.mark.parametrize("raw", HIDDEN)
@pytest.mark.parametrize("write", [True, False])
def test_a_path_with_a_control_character_is_denied_by_the_path_guard_naming_the_rule(
    workspace: Path, raw: str, write: bool,
) -> None:
    result = check(workspace, raw, write=write)
    assert result.decision.decision is ToolDecision.DENIED_BY_PATH_GUARD
    assert result.decision.matched_rule == "path guard: control character"
    reason = result.decision.reason or ""
    assert "control character" in reason and control_character(reason) is None, reason
    assert result.relative is None and not (workspace / raw).exists()


def test_a_relative_path_is_normalised_and_resolved_inside_the_workspace(workspace: Path) -> None:
    result = check(workspace, "./src//lib/../app.py")
    assert result.decision.decision is ToolDecision.ALLOWED
    assert result.decision.matched_rule == "workspace" and result.decision.reason is None
    assert result.relative == "src/app.py"
    assert result.absolute == workspace.resolve() / "src" / "app.py"


def test_a_symlinked_file_pointing_out_of_the_workspace_is_denied(
    workspace: Path, tmp_path: Path,
) -> None:
    (tmp_path / "secret.txt").write_text("outside\n")
    (workspace / "src" / "link.txt").symlink_to(tmp_path / "secret.txt")
    result = check(workspace, "src/link.txt")
    assert result.decision.decision is ToolDecision.DENIED_BY_PATH_GUARD
    assert "outside the workspace" in (result.decision.reason or "")


def test_a_path_below_a_symlinked_directory_pointing_out_is_denied(
    workspace: Path, tmp_path: Path,
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (workspace / "vendor").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    result = check(workspace, "vendor/new_file.py", write=True)
    assert result.decision.decision is ToolDecision.DENIED_BY_PATH_GUARD


def test_a_symlink_into_git_or_onto_a_forbidden_file_is_judged_by_its_target(
    workspace: Path,
) -> None:
    (workspace / "hooks").symlink_to(workspace / ".git", target_is_directory=True)
    (workspace / "docs.yml").symlink_to(workspace / ".github" / "workflows" / "ci.yml")
    assert check(workspace, "hooks/config").decision.decision is ToolDecision.DENIED_BY_PATH_GUARD
    via_link = check(workspace, "docs.yml", write=True).decision
    assert (via_link.decision, via_link.matched_rule) == (ToolDecision.DENIED_BY_POLICY,
                                                          "forbidden: .github/**")


def test_a_symlink_loop_is_denied_not_raised(workspace: Path) -> None:
    (workspace / "loop").symlink_to(workspace / "loop")
    assert check(workspace, "loop").decision.decision is ToolDecision.DENIED_BY_PATH_GUARD


def test_a_forbidden_path_may_be_read_but_not_written(workspace: Path) -> None:
    read = check(workspace, ".github/workflows/ci.yml")
    write = check(workspace, ".github/workflows/ci.yml", write=True)
    assert read.decision.decision is ToolDecision.ALLOWED
    assert write.decision.decision is ToolDecision.DENIED_BY_POLICY
    assert write.decision.matched_rule == "forbidden: .github/**"
    assert "forbidden" in (write.decision.reason or "")


@pytest.mark.parametrize(("raw", "glob"), [("certs/server.pem", "*.pem"), (".env", ".env"),
                                           ("config/.env.production", ".env.*")])
def test_reading_a_secret_file_is_denied_by_policy(workspace: Path, raw: str, glob: str) -> None:
    result = check(workspace, raw)
    assert result.decision.decision is ToolDecision.DENIED_BY_POLICY
    assert result.decision.matched_rule == f"secret: {glob}"


def test_an_allowed_glob_is_named_and_writes_outside_it_go_ahead_flagged(workspace: Path) -> None:
    inside = check(workspace, "src/app.py", write=True, allowed=("src/**", "tests/**"))
    outside = check(workspace, "README.md", write=True, allowed=("src/**",))
    read_outside = check(workspace, "README.md", allowed=("src/**",))
    assert (inside.decision.decision, inside.decision.matched_rule) == (
        ToolDecision.ALLOWED, "allowed: src/**")
    assert (outside.decision.decision, outside.decision.matched_rule) == (
        ToolDecision.ALLOWED, "outside allowed paths")
    assert read_outside.decision.matched_rule == "workspace"


def test_diff_paths_reads_both_sides_of_a_rename_and_quoted_names() -> None:
    diff = (
        "diff --git a/old name.txt b/new name.txt\nsimilarity index 100%\n"
        "rename from old name.txt\nrename to new name.txt\n"
        'diff --git "a/caf\\303\\251.md" "b/caf\\303\\251.md"\n'
        '--- "a/caf\\303\\251.md"\n+++ "b/caf\\303\\251.md"\n@@ -1 +1 @@\n-a\n+b\n'
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
        "@@ -0,0 +1 @@\n+x = 1\n"
    )
    assert set(diff_paths(diff)) == {"old name.txt", "new name.txt", "café.md", "new.py"}


@pytest.mark.parametrize("diff", [
    "", "not a diff\n", "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n",
    "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n",
    "--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n",
])
def test_diff_paths_refuses_what_it_cannot_vouch_for(diff: str) -> None:
    with pytest.raises(ValueError):
        diff_paths(diff)


def budget(**overrides: float) -> Budget:
    values = dict(max_attempts=1, wall_seconds=60.0, max_tool_calls=2, max_output_bytes=100,
                  backoff_initial_seconds=0.0, backoff_max_seconds=0.0)
    values.update(overrides)
    return Budget(**values)  # type: ignore[arg-type]


def test_the_budget_denies_the_call_after_the_last_one_it_allows() -> None:
    guard = BudgetGuard(budget(max_tool_calls=2))
    assert guard.check() is None
    guard.charge(10)
    assert guard.check() is None
    guard.charge(10)
    denied = guard.check()
    assert denied is not None and denied.decision is ToolDecision.DENIED_BY_BUDGET
    assert denied.matched_rule == "budget: max_tool_calls 2"
    assert (guard.calls, guard.output_bytes) == (2, 20)


def test_the_budget_denies_once_the_wall_clock_is_spent() -> None:
    now = [1000.0]
    guard = BudgetGuard(budget(wall_seconds=30.0), clock=lambda: now[0])
    now[0] += 29.9
    assert guard.check() is None
    now[0] += 0.1
    denied = guard.check()
    assert denied is not None and denied.matched_rule == "budget: wall_seconds 30"


def test_the_budget_denies_once_the_output_allowance_is_used() -> None:
    guard = BudgetGuard(budget(max_tool_calls=10, max_output_bytes=100))
    guard.charge(99)
    assert guard.check() is None
    guard.charge(1)
    denied = guard.check()
    assert denied is not None and denied.matched_rule == "budget: max_output_bytes 100"
    assert denied.reason
