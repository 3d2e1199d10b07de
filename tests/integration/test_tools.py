"""The tool runtime on a real git workspace: each tool's effect, guards, bounded redacted output."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from agentctl.config import defaults
from agentctl.config.schema import SECRET_FILES
from agentctl.domain.enums import ToolDecision, ToolOutcome
from agentctl.domain.errors import BadInput
from agentctl.domain.redaction import Redactor
from agentctl.domain.spec import CommandRules, PatchBoundary, ToolPolicy
from agentctl.domain.step import ToolResult
from agentctl.execution.agents.tool_context import ToolContext
from agentctl.execution.agents.tools import (
    TOOL_NAMES,
    execute,
    guard,
    validate_arguments,
)
from agentctl.execution.git import WorkspaceGit

GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
LITERAL_SECRET = "hunter2-correct-horse"


def make_context(workspace: Path, scratch: Path, *, allow_shell: bool = False,
                 max_result_bytes: int = 4096, allow: tuple[str, ...] = ()) -> ToolContext:
    config = defaults()
    rules = CommandRules(deny=config.tools.commands.deny,
                         ask=config.tools.commands.ask,
                         allow=(*config.tools.commands.allow, *allow))
    policy = ToolPolicy(commands=rules, allow_shell=allow_shell, secret_files=SECRET_FILES,
                        env_allowlist=("PATH",), env_passthrough=(),
                        max_result_bytes=max_result_bytes)
    boundary = PatchBoundary(allowed_paths=(), forbidden_paths=(".github/**", "infra/**"),
                             lockfile_patterns=(), generated_patterns=())
    # `python` is this interpreter: the rules name programs as written, not by path
    path = os.pathsep.join([str(Path(sys.executable).parent),
                            os.environ.get("PATH", "/usr/bin:/bin")])
    return ToolContext(workspace=workspace, policy=policy, boundary=boundary,
                       env={"PATH": path, "HOME": str(scratch)},
                       redactor=Redactor(literals=(LITERAL_SECRET,)), scratch=scratch,
                       git=WorkspaceGit(git_dir=workspace / ".git", work_tree=workspace,
                                        home=scratch))


@pytest.fixture
def context(repo: Path, tmp_path: Path) -> ToolContext:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return make_context(repo, scratch)


def call(tool: str, arguments: Mapping[str, object], context: ToolContext) -> ToolResult | None:
    """What the orchestrator does: execute only what the guard allowed; None when denied."""
    decision = guard(tool, arguments, context)
    return execute(tool, arguments, context) if decision.allowed else None


def ran(tool: str, arguments: Mapping[str, object], context: ToolContext) -> ToolResult:
    result = call(tool, arguments, context)
    assert result is not None, guard(tool, arguments, context)
    return result


def test_fs_read_returns_the_file_text(context: ToolContext) -> None:
    result = ran("fs.read", {"path": "src/app.py"}, context)
    assert result.ok and result.output.startswith("def greet(name):")
    assert result.output_bytes == len((context.workspace / "src/app.py").read_bytes())


def test_fs_read_of_a_missing_file_is_a_failed_result_not_an_exception(
    context: ToolContext,
) -> None:
    result = ran("fs.read", {"path": "src/missing.py"}, context)
    assert not result.ok and "does not exist" in (result.error or "")


def test_fs_read_of_a_huge_file_returns_a_bounded_redacted_head(context: ToolContext) -> None:
    (context.workspace / "big.log").write_text(f"token {GITHUB_TOKEN}\n" + "x" * 5_000_000)
    result = ran("fs.read", {"path": "big.log"}, context)
    assert result.ok and result.truncated and result.output_bytes > 5_000_000
    assert len(result.output.encode()) <= context.policy.max_result_bytes
    assert GITHUB_TOKEN not in result.output and "[REDACTED:github-token]" in result.output


def test_fs_write_creates_the_file_and_its_folders(context: ToolContext) -> None:
    result = ran("fs.write", {"path": "src/pkg/new.py", "content": "y = 2\n"}, context)
    assert result.ok
    assert (context.workspace / "src/pkg/new.py").read_text() == "y = 2\n"


def test_fs_replace_replaces_exactly_one_occurrence(context: ToolContext) -> None:
    result = ran("fs.replace", {"path": "src/config/settings.py", "old": "30", "new": "60"},
                 context)
    assert result.ok
    assert (context.workspace / "src/config/settings.py").read_text() == "TIMEOUT = 60\n"


def test_fs_replace_refuses_an_ambiguous_match_and_leaves_the_file_alone(
    context: ToolContext,
) -> None:
    target = context.workspace / "dup.txt"
    target.write_text("a\na\n")
    ambiguous = ran("fs.replace", {"path": "dup.txt", "old": "a", "new": "b"}, context)
    assert not ambiguous.ok and "occurs 2 times" in (ambiguous.error or "")
    assert target.read_text() == "a\na\n"
    arguments = {"path": "dup.txt", "old": "a", "new": "b"}
    wrong_count = ran("fs.replace", {**arguments, "count": 3}, context)
    assert not wrong_count.ok and target.read_text() == "a\na\n"
    both = ran("fs.replace", {**arguments, "count": 2}, context)
    assert both.ok and target.read_text() == "b\nb\n"


def test_fs_replace_of_absent_text_says_so(context: ToolContext) -> None:
    result = ran("fs.replace", {"path": "README.md", "old": "nope", "new": "x"}, context)
    assert not result.ok and "not found" in (result.error or "")


def test_fs_delete_removes_a_file_but_not_a_directory(context: ToolContext) -> None:
    assert ran("fs.delete", {"path": "README.md"}, context).ok
    assert not (context.workspace / "README.md").exists()
    folder = ran("fs.delete", {"path": "src"}, context)
    assert not folder.ok and (context.workspace / "src/app.py").exists()


def test_fs_rename_moves_a_file_and_never_overwrites(context: ToolContext) -> None:
    moved = ran("fs.rename", {"path": "src/app.py", "to": "src/core/app.py"}, context)
    assert moved.ok and (context.workspace / "src/core/app.py").exists()
    assert not (context.workspace / "src/app.py").exists()
    clash = ran("fs.rename", {"path": "README.md", "to": "src/core/app.py"}, context)
    assert not clash.ok and "already exists" in (clash.error or "")


def test_fs_rename_is_guarded_on_both_sides(context: ToolContext) -> None:
    decision = guard("fs.rename", {"path": "README.md", "to": ".github/README.md"}, context)
    assert (decision.decision, decision.matched_rule) == (ToolDecision.DENIED_BY_POLICY,
                                                          "forbidden: .github/**")
    decision = guard("fs.rename", {"path": ".git/HEAD", "to": "HEAD"}, context)
    assert decision.decision is ToolDecision.DENIED_BY_PATH_GUARD


def diff_of(workspace: Path, change: Mapping[str, str]) -> str:
    """A real `git diff` of `change`, then the workspace is put back as it was."""
    for name, text in change.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    subprocess.run(["git", "-C", str(workspace), "add", "-A"], check=True)
    diff = subprocess.run(["git", "-C", str(workspace), "diff", "--cached"], check=True,
                          capture_output=True, text=True).stdout
    subprocess.run(["git", "-C", str(workspace), "reset", "-q", "--hard"], check=True)
    return diff


def test_patch_apply_applies_a_unified_diff(context: ToolContext) -> None:
    diff = diff_of(context.workspace, {"src/app.py": "def greet(name):\n    return 'hi'\n",
                                       "docs/new.md": "# new\n"})
    decision = guard("patch.apply", {"diff": diff}, context)
    assert decision.allowed and decision.matched_rule == "workspace"
    result = execute("patch.apply", {"diff": diff}, context)
    assert result.ok, result
    assert "return 'hi'" in (context.workspace / "src/app.py").read_text()
    assert (context.workspace / "docs/new.md").read_text() == "# new\n"


def test_patch_apply_that_does_not_apply_is_a_failed_result(context: ToolContext) -> None:
    diff = diff_of(context.workspace, {"README.md": "# changed\n"})
    (context.workspace / "README.md").write_text("something else\n")
    result = ran("patch.apply", {"diff": diff}, context)
    assert not result.ok and result.exit_code not in (0, None)
    assert "git apply failed" in (result.error or "")


def test_patch_apply_touching_a_forbidden_path_is_denied_by_the_guard(
    context: ToolContext,
) -> None:
    diff = diff_of(context.workspace, {"src/app.py": "x = 1\n",
                                       ".github/workflows/deploy.yml": "name: pwned\n"})
    decision = guard("patch.apply", {"diff": diff}, context)
    assert (decision.decision, decision.matched_rule) == (ToolDecision.DENIED_BY_POLICY,
                                                          "forbidden: .github/**")
    workflow = context.workspace / ".github/workflows/deploy.yml"
    assert workflow.read_text() == "name: deploy\non: push\n"


def test_patch_apply_escaping_the_workspace_is_denied_by_the_path_guard(
    context: ToolContext,
) -> None:
    diff = "--- a/../evil.txt\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+x\n"
    decision = guard("patch.apply", {"diff": diff}, context)
    assert decision.decision is ToolDecision.DENIED_BY_PATH_GUARD


def test_shell_run_returns_output_and_exit_code(context: ToolContext) -> None:
    ok = ran("shell.run", {"command": "python -c \"print('hello')\""}, context)
    assert (ok.ok, ok.exit_code, ok.output, ok.error) == (True, 0, "hello\n", None)
    failed = ran("shell.run", {"command": "python -c \"raise SystemExit(3)\""}, context)
    assert (failed.ok, failed.exit_code) == (False, 3)
    assert failed.error == "exited with code 3"


def test_shell_run_bounds_a_1_mb_output_and_reads_only_its_head(context: ToolContext) -> None:
    result = ran("shell.run", {"command": "python -c \"print('x' * 1_000_000)\""}, context)
    assert result.ok and result.truncated
    assert result.output_bytes == 1_000_001
    assert len(result.output.encode()) == context.policy.max_result_bytes
    assert list(context.scratch.iterdir()) == []  # the full log does not pile up


def test_shell_run_output_is_redacted(context: ToolContext) -> None:
    command = f"echo token={GITHUB_TOKEN} also {LITERAL_SECRET}"
    result = ran("shell.run", {"command": command}, context)
    assert result.ok
    assert GITHUB_TOKEN not in result.output and LITERAL_SECRET not in result.output
    assert "[REDACTED" in result.output


def test_shell_run_stops_a_command_at_its_timeout(context: ToolContext) -> None:
    result = ran("shell.run", {"command": "sleep 30", "timeout": 0.5}, context)
    assert result.outcome is ToolOutcome.TIMED_OUT and result.error == "timed out after 0.5 s"


def test_shell_run_of_a_missing_program_is_a_failed_result(repo: Path, tmp_path: Path) -> None:
    context = make_context(repo, tmp_path, allow=("no-such-program-here *",))
    result = ran("shell.run", {"command": "no-such-program-here --flag"}, context)
    assert (result.ok, result.exit_code) == (False, 127)


@pytest.mark.parametrize("command", [
    "touch pwned",  # no rule allows it
    "python -c \"open('pwned', 'w')\" > log",  # shell metacharacters
    "python -c \"open('pwned', 'w')\"; true",
    "env python -c \"open('pwned', 'w')\"",  # allow rules match only as written
])
def test_a_denied_command_never_runs(context: ToolContext, command: str) -> None:
    assert call("shell.run", {"command": command}, context) is None
    assert not (context.workspace / "pwned").exists()


def test_shell_run_arguments_naming_a_secret_file_are_denied(context: ToolContext) -> None:
    decision = guard("shell.run", {"command": "cat .env"}, context)
    assert (decision.decision, decision.matched_rule) == (ToolDecision.DENIED_BY_POLICY,
                                                          "secret: .env")


def test_with_allow_shell_a_pipeline_runs_through_sh(repo: Path, tmp_path: Path) -> None:
    context = make_context(repo, tmp_path, allow_shell=True)
    command = "echo hi | python -c \"import sys; print(sys.stdin.read().upper())\""
    result = ran("shell.run", {"command": command}, context)
    assert result.ok and result.output == "HI\n\n"


def test_guard_names_the_allowing_rule(context: ToolContext) -> None:
    decision = guard("shell.run", {"command": "git status --short"}, context)
    assert (decision.decision, decision.matched_rule) == (ToolDecision.ALLOWED,
                                                          "allow: git status *")
    assert guard("fs.read", {"path": "README.md"}, context).matched_rule == "workspace"


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("fs.chmod", {"path": "x"}, "unknown tool"),
    ("fs.read", {}, "missing argument 'path'"),
    ("fs.read", {"path": 3}, "'path' must be a string"),
    ("fs.write", {"path": "x"}, "missing argument 'content'"),
    ("fs.replace", {"path": "x", "old": "", "new": "y"}, "'old' must not be empty"),
    ("fs.replace", {"path": "x", "old": "a", "new": "b", "count": 0}, "'count'"),
    ("shell.run", {"command": "ls", "timeout": -1}, "'timeout'"),
    ("shell.run", {"command": "ls", "cwd": "/"}, "unknown argument 'cwd'"),
])
def test_malformed_arguments_are_bad_input_naming_the_tool_and_argument(
    tool: str, arguments: Mapping[str, object], message: str, context: ToolContext,
) -> None:
    with pytest.raises(BadInput, match=message):
        validate_arguments(tool, arguments)
    assert guard(tool, arguments, context).decision is ToolDecision.DENIED_BY_POLICY
    assert not execute(tool, arguments, context).ok


def test_defaults_are_filled_in() -> None:
    assert validate_arguments("shell.run", {"command": "ls"}) == {"command": "ls", "timeout": 120.0}
    assert validate_arguments("fs.replace", {"path": "a", "old": "b", "new": ""})["count"] is None
    assert len(TOOL_NAMES) == 7


def test_fs_read_of_a_fifo_fails_instead_of_blocking(context: ToolContext) -> None:
    os.mkfifo(context.workspace / "pipe")
    result = ran("fs.read", {"path": "pipe"}, context)
    assert not result.ok and "not a regular file" in (result.error or "")


def test_a_symlink_planted_in_the_workspace_cannot_carry_a_write_out(
    context: ToolContext, tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched\n")
    (context.workspace / "notes.txt").symlink_to(outside)
    assert call("fs.write", {"path": "notes.txt", "content": "pwned"}, context) is None
    assert outside.read_text() == "untouched\n"


def test_patch_apply_is_judged_by_the_paths_git_itself_will_write(context: ToolContext) -> None:
    # git drops a traditional diff's space-separated timestamp; unidiff keeps it in the name
    diff = ("--- /dev/null\n+++ b/.github/workflows/new.yml 2020-01-01 00:00:00.000000000 +0000\n"
            "@@ -0,0 +1 @@\n+on: push\n")
    decision = guard("patch.apply", {"diff": diff}, context)
    assert (decision.decision, decision.matched_rule) == (ToolDecision.DENIED_BY_POLICY,
                                                          "forbidden: .github/**")


def renamed_diff(workspace: Path, old: str, new: str) -> str:
    (workspace / new).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "-C", str(workspace), "mv", old, new], check=True)
    diff = subprocess.run(["git", "-C", str(workspace), "diff", "--cached", "-M"], check=True,
                          capture_output=True, text=True).stdout
    subprocess.run(["git", "-C", str(workspace), "reset", "-q", "--hard"], check=True)
    return diff


def test_patch_apply_renames_a_file_and_judges_both_sides(context: ToolContext) -> None:
    into_forbidden = renamed_diff(context.workspace, "README.md", ".github/README.md")
    assert guard("patch.apply", {"diff": into_forbidden}, context).matched_rule == (
        "forbidden: .github/**")
    out_of_forbidden = renamed_diff(context.workspace, ".github/workflows/deploy.yml", "ci.yml")
    assert guard("patch.apply", {"diff": out_of_forbidden}, context).matched_rule == (
        "forbidden: .github/**")
    plain = renamed_diff(context.workspace, "README.md", "docs/README.md")
    assert ran("patch.apply", {"diff": plain}, context).ok
    assert (context.workspace / "docs/README.md").exists()
    assert not (context.workspace / "README.md").exists()


def test_a_hard_link_to_a_file_outside_is_replaced_never_written_through(
        context: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's file\n")
    os.link(outside, context.workspace / "linked.txt")

    for tool, arguments in (("fs.write", {"path": "linked.txt", "content": "agent\n"}),
                            ("fs.replace", {"path": "linked.txt", "old": "agent", "new": "x"})):
        assert ran(tool, arguments, context).ok

    assert outside.read_text() == "the user's file\n"
    assert (context.workspace / "linked.txt").read_text() == "x\n"
    assert (context.workspace / "linked.txt").stat().st_nlink == 1


def test_a_native_command_asked_to_run_in_the_background_is_denied(context: ToolContext) -> None:
    """Every process a call starts ends with the call: a background Bash would keep writing
    through later calls, its edits credited to them."""
    from agentctl.domain.native_tools import native_call
    from agentctl.execution.agents.tools import guard_native

    workspace = str(context.workspace)
    for agent, tool, sync, background_args in (
            ("claude", "Bash", {}, {"run_in_background": True}),
            ("copilot", "bash", {"mode": "sync"}, {"mode": "async"}),
            ("copilot", "bash", {"mode": "sync"}, {"mode": "async", "detach": True})):
        foreground = native_call(agent, tool, {"command": "python3 -V", **sync}, workspace)
        background = native_call(agent, tool, {"command": "python3 -V", **background_args},
                                 workspace)
        assert guard_native(foreground, context).allowed
        denied = guard_native(background, context)
        assert (denied.decision, denied.matched_rule) == (ToolDecision.DENIED_BY_POLICY,
                                                          "native: background command")
        assert denied.reason is not None and f"{agent}.{tool}" in denied.reason
    # Copilot's keystrokes into a shell still running would run unchecked
    typed = guard_native(native_call("copilot", "write_bash",
                                     {"shellId": "1", "input": "touch x\n"}, workspace), context)
    assert (typed.decision, typed.matched_rule) == (ToolDecision.DENIED_BY_POLICY,
                                                    "native: unknown tool")
