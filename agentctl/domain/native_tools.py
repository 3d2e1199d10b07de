"""What a native agent's tool call asks for, in agentctl's terms: a command for the command
guard, paths for the path guard (written or read), a name for the rules, or nothing to judge.

Pure: the hook's input goes in (the agent, its tool name and input, the workspace), a
`NativeCall` comes out; the runtime judges it with the same guards as a script plan.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath


class NativeAction(StrEnum):
    COMMAND = "command"  # a shell command: the command guard
    WRITE = "write"  # creates, changes or removes paths: path guard + forbidden globs
    READ = "read"  # reads paths: the secret-file rule
    NAMED = "named"  # judged by the command rules on its name (`WebFetch URL`, `mcp__x__y`)
    GUARDED_ELSEWHERE = "guarded elsewhere"  # agentctl's own MCP tools: the server guards them
    INTERNAL = "internal"  # the agent's own bookkeeping (a todo list): no side effect
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class NativeCall:
    tool_name: str  # `claude.Bash`, `codex.apply_patch`
    action: NativeAction
    arguments: Mapping[str, object]  # what is recorded (the native input, as given)
    command: str = ""
    paths: tuple[str, ...] = ()  # workspace-relative where they could be made so

    @property
    def background(self) -> bool:
        """A command the agent asked to keep running after its call returns (Claude Code's
        `run_in_background`, Gemini's `is_background`, Copilot's `mode: "async"`, `async` or
        `detach`): it would go on writing during later calls."""
        if self.action is not NativeAction.COMMAND:
            return False
        mode = self.arguments.get("mode")
        return (isinstance(mode, str) and mode.strip().lower() == "async") or any(
            self.arguments.get(key) not in (None, False, "", "false")
            for key in ("run_in_background", "is_background", "async", "detach"))

    @property
    def writes(self) -> bool:
        """Whether the call may change the workspace (so its changed files are looked for)."""
        return self.action in (NativeAction.COMMAND, NativeAction.WRITE, NativeAction.NAMED,
                               NativeAction.UNKNOWN)


OWN_MCP_PREFIX = "mcp__agentctl__"
_CLAUDE_WRITE = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
                 "NotebookEdit": "notebook_path"}
_CLAUDE_READ = {"Read": "file_path", "Grep": "path", "Glob": "path", "LS": "path",
                "NotebookRead": "notebook_path"}
_CLAUDE_INTERNAL = frozenset({"TodoWrite", "Task", "Agent", "ExitPlanMode", "BashOutput",
                              "KillShell", "KillBash", "ToolSearch", "ListMcpResourcesTool",
                              "ReadMcpResourceTool", "TaskOutput", "TaskStop"})
# Copilot CLI's tools (its `apply_patch`, offered to some models, is Codex's patch format)
_COPILOT_WRITE = {"create": "path", "edit": "path", "str_replace": "path", "insert": "path",
                  "str_replace_editor": "path", "write": "path"}
_COPILOT_READ = {"view": "path", "grep": "paths", "rg": "paths", "glob": "paths"}
# reading, listing or stopping a running shell changes nothing; `write_bash`/`write_powershell`
# (keystrokes into a shell still running) is left out, so it is denied as unknown: what it types
# would run unchecked
_COPILOT_INTERNAL = frozenset({"read_bash", "stop_bash", "list_bash", "read_powershell",
                               "stop_powershell", "list_powershell", "sql", "session_store_sql",
                               "skill", "fetch_copilot_cli_documentation", "report_intent",
                               "task", "read_agent", "list_agents", "write_agent",
                               "task_complete", "ask_user", "exit_plan_mode", "update_todo"})
_WEB = frozenset({"WebFetch", "WebSearch", "web_search", "web_fetch", "google_web_search"})
# Gemini CLI's tools (0.61): the path each reads or writes; its own bookkeeping
_GEMINI_WRITE = {"write_file": ("file_path",), "replace": ("file_path",)}
_GEMINI_READ = {"read_file": ("file_path",), "list_directory": ("dir_path",),
                "glob": ("dir_path", "pattern"), "grep_search": ("dir_path", "include_pattern"),
                "search_file_content": ("dir_path", "include"),
                "read_many_files": ("include",)}
_GEMINI_INTERNAL = frozenset({"write_todos", "update_topic", "enter_plan_mode", "exit_plan_mode",
                              "ask_user", "complete_task", "activate_skill", "save_memory",
                              "list_background_processes",
                              "read_background_output", "get_internal_docs",
                              "list_mcp_resources", "read_mcp_resource"})
# opencode's tools (1.18), by their own lowercase names and camelCase keys
_OPENCODE_WRITE = {"write": "filePath", "edit": "filePath", "multiedit": "filePath"}
_OPENCODE_READ = {"read": "filePath", "glob": "path", "grep": "path", "list": "path"}
_OPENCODE_READ_GLOB = {"glob": "pattern", "grep": "include"}
_OPENCODE_WEB = frozenset({"webfetch", "websearch", "codesearch"})
_OPENCODE_INTERNAL = frozenset({"todowrite", "todoread", "task", "skill", "question",
                                "plan_enter", "plan_exit", "invalid"})
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$",
                         re.MULTILINE)


def native_call(agent: str, tool: str, tool_input: Mapping[str, object],
                workspace: str) -> NativeCall:
    """The agentctl view of one native tool call of `agent` (claude, codex or gemini)."""
    name = f"{agent}.{tool}"
    arguments = dict(tool_input)
    if tool.startswith(OWN_MCP_PREFIX):
        return NativeCall(name, NativeAction.GUARDED_ELSEWHERE, arguments)
    if tool.startswith("mcp__"):
        return NativeCall(name, NativeAction.NAMED, arguments, command=tool)
    if agent == "opencode":
        return _opencode(name, tool, tool_input, workspace)
    if agent == "copilot" and tool not in ("apply_patch", *_WEB):
        return _copilot_call(name, tool, tool_input, arguments, workspace)
    if tool in _WEB:
        target = tool_input.get("url") or tool_input.get("query") or tool_input.get("prompt") or ""
        return NativeCall(name, NativeAction.NAMED, arguments,
                          command=f"{tool} {_quoted(str(target))}".strip())
    if tool in ("Bash", "exec_command", "shell", "local_shell", "unified_exec",
                "run_shell_command"):
        return NativeCall(name, NativeAction.COMMAND, arguments, command=_command(tool_input))
    if tool == "apply_patch":
        return _patch_call(name, arguments, workspace, tool_input.get("command")
                           or tool_input.get("input") or tool_input.get("patch"))
    if tool in _CLAUDE_WRITE:
        return NativeCall(name, NativeAction.WRITE, arguments,
                          paths=(relative(_text(tool_input, _CLAUDE_WRITE[tool]), workspace),))
    if tool in _CLAUDE_READ:
        # a file glob may name a secret file too (`.env`)
        read = (_text(tool_input, _CLAUDE_READ[tool]),
                _text(tool_input, {"Grep": "glob", "Glob": "pattern"}.get(tool, "")))
        return NativeCall(name, NativeAction.READ, arguments,
                          paths=tuple(relative(p, workspace) for p in read if p))
    if tool in _CLAUDE_INTERNAL:
        return NativeCall(name, NativeAction.INTERNAL, arguments)
    if agent == "gemini":
        return _gemini_call(name, tool, tool_input, workspace)
    return NativeCall(name, NativeAction.UNKNOWN, arguments)


def _gemini_call(name: str, tool: str, tool_input: Mapping[str, object],
                 workspace: str) -> NativeCall:
    """Gemini CLI's file tools by the paths they name (a list where it takes several)."""
    arguments = dict(tool_input)
    if tool in _GEMINI_WRITE or tool in _GEMINI_READ:
        paths: list[str] = []
        for key in _GEMINI_WRITE.get(tool) or _GEMINI_READ[tool]:
            value = tool_input.get(key)
            for path in value if isinstance(value, list) else [value]:
                if isinstance(path, str) and path:
                    paths.append(relative(path, workspace))
        action = NativeAction.WRITE if tool in _GEMINI_WRITE else NativeAction.READ
        if action is NativeAction.WRITE and not paths:
            paths = [""]  # a write that names no file is refused, never allowed unchecked
        return NativeCall(name, action, arguments, paths=tuple(paths))
    if tool in _GEMINI_INTERNAL:
        return NativeCall(name, NativeAction.INTERNAL, arguments)
    return NativeCall(name, NativeAction.UNKNOWN, arguments)


def _copilot_call(name: str, tool: str, tool_input: Mapping[str, object],
                  arguments: dict[str, object], workspace: str) -> NativeCall:
    """One of Copilot CLI's own tools (its names are Copilot's alone: `view`, `bash`)."""
    if tool in ("bash", "powershell"):
        return NativeCall(name, NativeAction.COMMAND, arguments, command=_command(tool_input))
    if tool in _COPILOT_WRITE:
        return NativeCall(name, NativeAction.WRITE, arguments,
                          paths=(relative(_text(tool_input, _COPILOT_WRITE[tool]), workspace),))
    if tool in _COPILOT_READ:
        value = tool_input.get(_COPILOT_READ[tool])  # a search's paths: one or several
        given = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        read = [*(str(path) for path in given), _text(tool_input, "glob"),
                _text(tool_input, "pattern") if tool == "glob" else ""]
        return NativeCall(name, NativeAction.READ, arguments,
                          paths=tuple(relative(p, workspace) for p in read if p))
    if tool in _COPILOT_INTERNAL:
        return NativeCall(name, NativeAction.INTERNAL, arguments)
    return NativeCall(name, NativeAction.UNKNOWN, arguments)


def _opencode(name: str, tool: str, tool_input: Mapping[str, object],
              workspace: str) -> NativeCall:
    """One of opencode's calls: `bash` a command, `write`/`edit`/`apply_patch` writes, `read`,
    `glob`, `grep`, `list` reads, web tools by name, its todo list and subagents internal (a
    subagent's own calls come through the same plugin); anything else (an MCP server's tool,
    `batch`) unknown, so denied."""
    arguments = dict(tool_input)
    if tool == "bash":
        return NativeCall(name, NativeAction.COMMAND, arguments, command=_command(tool_input))
    if tool in ("apply_patch", "patch"):
        return _patch_call(name, arguments, workspace,
                           tool_input.get("patchText") or tool_input.get("patch"))
    if tool in _OPENCODE_WRITE:
        return NativeCall(name, NativeAction.WRITE, arguments,
                          paths=(relative(_text(tool_input, _OPENCODE_WRITE[tool]), workspace),))
    if tool in _OPENCODE_READ:
        read = (_text(tool_input, _OPENCODE_READ[tool]),
                _text(tool_input, _OPENCODE_READ_GLOB.get(tool, "")))
        return NativeCall(name, NativeAction.READ, arguments,
                          paths=tuple(relative(p, workspace) for p in read if p))
    if tool in _OPENCODE_WEB:
        target = tool_input.get("url") or tool_input.get("query") or ""
        return NativeCall(name, NativeAction.NAMED, arguments,
                          command=f"{tool} {_quoted(str(target))}".strip())
    if tool in _OPENCODE_INTERNAL:
        return NativeCall(name, NativeAction.INTERNAL, arguments)
    return NativeCall(name, NativeAction.UNKNOWN, arguments)


def relative(path: str, workspace: str) -> str:
    """An absolute path inside the workspace made relative to it; anything else as given (the
    path guard then refuses it as absolute or outside)."""
    if not path.startswith("/"):
        return path
    root = PurePosixPath(workspace)
    candidate = PurePosixPath(path)
    if candidate == root:
        return "."
    if candidate.is_relative_to(root):
        return candidate.relative_to(root).as_posix()
    return path


def _command(tool_input: Mapping[str, object]) -> str:
    value = tool_input.get("command", tool_input.get("cmd", ""))
    if isinstance(value, list):  # codex may give argv

        return shlex.join(str(part) for part in value)
    return str(value)



def _patch_call(name: str, arguments: dict[str, object], workspace: str,
                text: object) -> NativeCall:
    """A patch tool's call: a write of every file its patch text names (one empty path when it
    names none), whichever CLI's tool and argument carried the text."""
    patch = text if isinstance(text, str) else ""
    paths = tuple(dict.fromkeys(relative(path, workspace) for path in _PATCH_PATH.findall(patch)))
    return NativeCall(name, NativeAction.WRITE, arguments, paths=paths or ("",))

def _text(tool_input: Mapping[str, object], key: str) -> str:
    value = tool_input.get(key)
    return value if isinstance(value, str) else ""


def _quoted(text: str) -> str:

    return shlex.quote(text) if text else ""
