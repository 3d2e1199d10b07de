"""A native agent's tool call in agentctl's terms: which guard judges it, on which paths."""

from __future__ import annotations

import pytest

from agentctl.domain.native_tools import NativeAction, native_call

WS = "/tmp/ws/repo"


def test_claude_file_tools_are_judged_on_the_workspace_relative_path() -> None:
    call = native_call("claude", "Edit", {"file_path": f"{WS}/src/app.py", "old_string": "a",
                                          "new_string": "b"}, WS)
    assert (call.tool_name, call.action, call.paths) == ("claude.Edit", NativeAction.WRITE,
                                                         ("src/app.py",))
    outside = native_call("claude", "Write", {"file_path": "/etc/passwd", "content": ""}, WS)
    assert outside.paths == ("/etc/passwd",)  # left absolute: the path guard refuses it


def test_reads_name_every_path_a_secret_rule_must_see() -> None:
    grep = native_call("claude", "Grep", {"pattern": "KEY", "path": f"{WS}/cfg", "glob": ".env"},
                       WS)
    assert grep.action is NativeAction.READ and grep.paths == ("cfg", ".env")
    assert native_call("claude", "Glob", {"pattern": "**/*.pem"}, WS).paths == ("**/*.pem",)


def test_apply_patch_names_every_path_it_touches_both_sides_of_a_move() -> None:
    patch = ("*** Begin Patch\n*** Update File: a.py\n*** Move to: b/a.py\n@@\n-x\n+y\n"
             "*** Delete File: old.txt\n*** Add File: .github/x.yml\n+k\n*** End Patch\n")
    call = native_call("codex", "apply_patch", {"command": patch}, WS)
    assert call.action is NativeAction.WRITE
    assert call.paths == ("a.py", "b/a.py", "old.txt", ".github/x.yml")


def test_commands_web_and_mcp_tools_are_judged_by_the_rules() -> None:
    assert native_call("codex", "Bash", {"command": "pytest -q"}, WS).command == "pytest -q"
    assert native_call("codex", "exec_command", {"cmd": ["ls", "-a b"]}, WS).command == "ls '-a b'"
    web = native_call("claude", "WebFetch", {"url": "https://x.test/a?b&c"}, WS)
    assert web.action is NativeAction.NAMED and web.command == "WebFetch 'https://x.test/a?b&c'"
    other = native_call("claude", "mcp__github__create_pr", {}, WS)
    assert other.action is NativeAction.NAMED and other.command == "mcp__github__create_pr"
    assert native_call("claude", "mcp__agentctl__fs_write", {}, WS).action \
        is NativeAction.GUARDED_ELSEWHERE


def test_an_unknown_tool_is_unknown_and_bookkeeping_is_internal() -> None:
    assert native_call("claude", "Teleport", {}, WS).action is NativeAction.UNKNOWN
    assert native_call("claude", "TodoWrite", {"todos": []}, WS).action is NativeAction.INTERNAL


def test_copilot_tools_are_judged_by_their_own_names() -> None:
    shell = native_call("copilot", "bash", {"command": "pytest -q", "description": "t"}, WS)
    assert (shell.tool_name, shell.action, shell.command) == ("copilot.bash",
                                                              NativeAction.COMMAND, "pytest -q")
    for tool in ("create", "edit"):
        write = native_call("copilot", tool, {"path": f"{WS}/.github/x.yml"}, WS)
        assert (write.action, write.paths) == (NativeAction.WRITE, (".github/x.yml",))
    grep = native_call("copilot", "grep", {"pattern": "KEY", "paths": [f"{WS}/cfg", "/etc"],
                                           "glob": ".env"}, WS)
    assert (grep.action, grep.paths) == (NativeAction.READ, ("cfg", "/etc", ".env"))
    assert native_call("copilot", "glob", {"pattern": "**/*.pem"}, WS).paths == ("**/*.pem",)
    patch = native_call("copilot", "apply_patch",
                        {"input": "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch\n"}, WS)
    assert (patch.action, patch.paths) == (NativeAction.WRITE, ("a.py",))
    for tool in ("read_bash", "stop_bash", "list_bash"):  # read or end a shell: no write
        assert native_call("copilot", tool, {"shellId": "1"}, WS).action is NativeAction.INTERNAL
    # keystrokes into a shell still running would run unchecked: unknown, so denied
    assert native_call("copilot", "write_bash", {"shellId": "1", "input": "rm -rf x\n"},
                       WS).action is NativeAction.UNKNOWN
    # a name Copilot does not have is judged as unknown, never as another CLI's tool
    assert native_call("copilot", "Write", {"file_path": "a.py"}, WS).action \
        is NativeAction.UNKNOWN


@pytest.mark.parametrize(("agent", "tool", "extra"), [
    ("claude", "Bash", {"run_in_background": True}),
    ("gemini", "run_shell_command", {"is_background": True}),
    ("copilot", "bash", {"mode": "async"}),
    ("copilot", "bash", {"mode": "ASYNC "}),
    ("copilot", "bash", {"mode": "async", "detach": True}),
    ("copilot", "bash", {"detach": True}),
    ("copilot", "bash", {"async": True}),
    ("copilot", "powershell", {"mode": "async"}),
])
def test_a_command_asked_to_outlive_its_call_is_background(
        agent: str, tool: str, extra: dict[str, object]) -> None:
    assert native_call(agent, tool, {"command": "sleep 9", **extra}, WS).background


@pytest.mark.parametrize("extra", [{}, {"mode": "sync"}, {"mode": "sync", "initial_wait": 30},
                                   {"detach": False}, {"async": False}])
def test_a_command_run_to_its_end_is_not_background(extra: dict[str, object]) -> None:
    assert not native_call("copilot", "bash", {"command": "pytest -q", **extra}, WS).background


def test_gemini_tools_by_the_paths_and_commands_they_name() -> None:
    shell = native_call("gemini", "run_shell_command", {"command": "pytest -q",
                                                        "dir_path": "src"}, WS)
    assert (shell.tool_name, shell.action, shell.command) == (
        "gemini.run_shell_command", NativeAction.COMMAND, "pytest -q")
    assert native_call("gemini", "run_shell_command", {"command": "x", "is_background": True},
                       WS).background
    for tool in ("write_file", "replace"):
        write = native_call("gemini", tool, {"file_path": f"{WS}/a/b.py"}, WS)
        assert (write.action, write.paths) == (NativeAction.WRITE, ("a/b.py",))
    assert native_call("gemini", "write_file", {"content": "x"}, WS).paths == ("",)
    many = native_call("gemini", "read_many_files", {"include": [".env", f"{WS}/src"]}, WS)
    assert (many.action, many.paths) == (NativeAction.READ, (".env", "src"))
    grep = native_call("gemini", "grep_search", {"pattern": "KEY", "dir_path": "cfg",
                                                 "include_pattern": "*.pem"}, WS)
    assert grep.paths == ("cfg", "*.pem")
    web = native_call("gemini", "web_fetch", {"prompt": "summarise https://x.test"}, WS)
    assert web.action is NativeAction.NAMED and web.command == "web_fetch 'summarise https://x.test'"
    assert native_call("gemini", "write_todos", {"todos": []}, WS).action is NativeAction.INTERNAL
    # a sub-agent's own calls are not known to reach the hooks: unknown, so denied
    assert native_call("gemini", "invoke_agent", {}, WS).action is NativeAction.UNKNOWN
