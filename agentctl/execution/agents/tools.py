"""The tool runtime: argument validation, the guard before a call, and the executors after it.

No database here: the caller records each call as a ToolCall with the guard's decision and the
result. `execute` turns every ordinary failure (missing file, failing command, timeout) into a
ToolResult with ok=False, so an agent gets an answer instead of a crash. Output is bounded to
`policy.max_result_bytes` and redacted before it leaves this module.
"""

from __future__ import annotations

import os
import shlex
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from agentctl.domain.command_rules import GuardDecision, check_command, combine
from agentctl.domain.enums import ToolDecision, ToolOutcome
from agentctl.domain.errors import BadInput
from agentctl.domain.globs import first_match
from agentctl.domain.native_tools import NativeAction, NativeCall
from agentctl.domain.step import ToolResult
from agentctl.execution.agents import beneath
from agentctl.execution.agents.guards import PathCheck, check_path, git_apply_paths
from agentctl.execution.agents.patch_paths import diff_paths
from agentctl.execution.agents.shell_tool import (
    REDACTION_SLACK,
    bounded_output,
    elapsed_ms,
    failure_word,
    process_result,
    run_tool_process,
    shell_run,
)
from agentctl.execution.agents.tool_context import ToolContext, ToolFailure
from agentctl.execution.git import hardened_argv

TOOL_NAMES = ("fs.read", "fs.write", "fs.replace", "fs.delete", "fs.rename", "patch.apply",
              "shell.run")
DEFAULT_TIMEOUT_SECONDS = 120.0
GIT_APPLY_TIMEOUT_SECONDS = 120.0

# tool -> (required arguments, optional arguments)
_ARGUMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "fs.read": (("path",), ()),
    "fs.write": (("path", "content"), ()),
    "fs.replace": (("path", "old", "new"), ("count",)),
    "fs.delete": (("path",), ()),
    "fs.rename": (("path", "to"), ()),
    "patch.apply": (("diff",), ()),
    "shell.run": (("command",), ("timeout",)),
}
_MAY_BE_EMPTY = frozenset({"content", "new"})


def validate_arguments(tool: str, arguments: Mapping[str, object]) -> dict[str, object]:
    """The arguments with defaults filled in; BadInput names the tool and the bad argument."""
    if tool not in _ARGUMENTS:
        raise BadInput(f"unknown tool {tool!r}; expected one of: {', '.join(TOOL_NAMES)}")
    required, optional = _ARGUMENTS[tool]
    known = required + optional
    for name in arguments:
        if name not in known:
            raise BadInput(f"{tool}: unknown argument {name!r}; expected {', '.join(known)}")
    for name in required:
        if name not in arguments:
            raise BadInput(f"{tool}: missing argument {name!r}")
    values: dict[str, object] = {"count": None} if tool == "fs.replace" else {}
    if tool == "shell.run":
        values["timeout"] = DEFAULT_TIMEOUT_SECONDS
    for name, value in arguments.items():
        values[name] = _checked(tool, name, value)
    return values


def _checked(tool: str, name: str, value: object) -> object:
    if name == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BadInput(f"{tool}: argument 'count' must be a positive integer, got {value!r}")
        return value
    if name == "timeout":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise BadInput(f"{tool}: argument 'timeout' must be a positive number of seconds, "
                           f"got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise BadInput(f"{tool}: argument {name!r} must be a string, got {type(value).__name__}")
    if not value.strip() and name not in _MAY_BE_EMPTY:
        raise BadInput(f"{tool}: argument {name!r} must not be empty")
    return value


def guard(tool: str, arguments: Mapping[str, object], context: ToolContext) -> GuardDecision:
    """The path guard on every path the call touches, the command guard for shell.run."""
    try:
        args = validate_arguments(tool, arguments)
    except BadInput as error:
        return GuardDecision(ToolDecision.DENIED_BY_POLICY, "invalid arguments", str(error))
    if tool == "shell.run":
        return _guard_command(str(args["command"]), context)
    if tool == "patch.apply":
        diff = str(args["diff"])
        try:
            paths = diff_paths(diff) + git_apply_paths(
                diff, git=context.git, scratch=context.scratch, should_stop=context.should_stop)
        except (ValueError, OSError) as error:
            return GuardDecision(ToolDecision.DENIED_BY_PATH_GUARD, "path guard: unreadable diff",
                                 f"patch.apply: {error}")
        unique = dict.fromkeys(paths)
        return combine([_check(context, path, write=True).decision for path in unique])
    names = [args["path"], args["to"]] if tool == "fs.rename" else [args["path"]]
    write = tool != "fs.read"
    return combine([_check(context, str(name), write=write).decision for name in names])


def guard_native(call: NativeCall, context: ToolContext) -> GuardDecision:
    """A native agent's call judged by the same guards as the tool it maps to: the command
    guard for a shell command, the path guard on every path it writes or reads, the command
    rules on its name for web and MCP tools; an unknown tool is denied."""
    match call.action:
        case NativeAction.COMMAND:
            if not call.command.strip():
                return GuardDecision(ToolDecision.DENIED_BY_POLICY, "invalid arguments",
                                     f"{call.tool_name}: no command given")
            if call.background:  # every process a call starts ends with the call
                return GuardDecision(ToolDecision.DENIED_BY_POLICY, "native: background command",
                                     f"{call.tool_name}: a command left running in the "
                                     "background would change files during later calls, "
                                     "credited to them; run it in the foreground")
            return _guard_command(call.command, context)
        case NativeAction.WRITE | NativeAction.READ:
            write = call.action is NativeAction.WRITE
            if not call.paths:
                return GuardDecision(ToolDecision.ALLOWED, "workspace", None)
            return combine([_check(context, path, write=write).decision for path in call.paths])
        case NativeAction.NAMED:
            return check_command(call.command, context.policy.commands, allow_shell=False)
        case NativeAction.GUARDED_ELSEWHERE:
            return GuardDecision(ToolDecision.ALLOWED, "mcp: agentctl guards it", None)
        case NativeAction.INTERNAL:
            return GuardDecision(ToolDecision.ALLOWED, "native: no side effect", None)
        case _:
            return GuardDecision(ToolDecision.DENIED_BY_POLICY, "native: unknown tool",
                                 f"{call.tool_name} is a tool agentctl does not know how to "
                                 "check, so it is denied")


def _guard_command(command: str, context: ToolContext) -> GuardDecision:
    """The command rules, then no argument may name a secret file (`cat .env`)."""
    policy = context.policy
    decision = check_command(command, policy.commands, allow_shell=policy.allow_shell)
    if decision.decision not in (ToolDecision.ALLOWED, ToolDecision.REQUIRES_APPROVAL):
        return decision
    try:
        words = shlex.split(command)
    except ValueError:  # only reachable with allow_shell: the rules have judged it already
        words = command.split()
    for word in words:
        for candidate in (word, word.partition("=")[2]):
            name = candidate.removeprefix("~/").lstrip("/")
            glob = first_match(policy.secret_files, name) if name else None
            if glob is not None:
                return GuardDecision(ToolDecision.DENIED_BY_POLICY, f"secret: {glob}",
                                     f"`{candidate}` names a secret file (`{glob}`); commands "
                                     "may not read or write it")
    return decision


def _check(context: ToolContext, raw: str, *, write: bool) -> PathCheck:
    return check_path(
        context.workspace, raw, write=write, forbidden=context.boundary.forbidden_paths,
        secret_files=context.policy.secret_files, allowed=context.boundary.allowed_paths,
    )


def execute(tool: str, arguments: Mapping[str, object], context: ToolContext) -> ToolResult:
    """Carry out a call `guard` allowed. Ordinary failures come back as ok=False, never raised."""
    started = time.monotonic()
    try:
        args = validate_arguments(tool, arguments)
        result = _EXECUTORS[tool](args, context)
    except (BadInput, ToolFailure) as error:
        result = ToolResult(outcome=ToolOutcome.FAILED, error=str(error))
    except OSError as error:
        result = ToolResult(outcome=ToolOutcome.FAILED, error=f"{tool}: {error.strerror or error}")
    clean = context.redactor.clean
    if tool in _NAMING_PATHS:  # "wrote 6 bytes to <path>": a secret used as a file name too
        result = replace(result, output=clean(result.output))
    if result.error:
        result = replace(result, error=clean(result.error))
    if result.duration_ms:  # a process's own measure
        return result
    return replace(result, duration_ms=round((time.monotonic() - started) * 1000))


_NAMING_PATHS = frozenset({"fs.write", "fs.replace", "fs.delete", "fs.rename"})


def _path(context: ToolContext, raw: object, *, write: bool) -> str:
    """Re-check at execution time: the guard's answer may be stale, the workspace may have moved.
    The executors then reach the judged path through `beneath`, never by its name as a whole."""
    check = _check(context, str(raw), write=write)
    if not check.decision.allowed or check.relative is None:
        raise ToolFailure(f"refused: {check.decision.reason}")
    return check.relative


def _root(context: ToolContext) -> str:
    return str(context.workspace.resolve())


def _fs_read(args: Mapping[str, object], context: ToolContext) -> ToolResult:
    relative = _path(context, args["path"], write=False)
    name = relative.rpartition("/")[2]
    with beneath.parent_of(_root(context), relative, "fs.read") as parent:
        descriptor = beneath.open_regular(parent, name, relative, "fs.read")
    try:
        size = os.fstat(descriptor).st_size
        head = beneath.read_all(descriptor, context.policy.max_result_bytes + REDACTION_SLACK)
    finally:
        os.close(descriptor)
    text, truncated = bounded_output(head, size, context)
    return ToolResult(outcome=ToolOutcome.OK, output=text, truncated=truncated,
                      output_bytes=size)


def _fs_write(args: Mapping[str, object], context: ToolContext) -> ToolResult:
    relative = _path(context, args["path"], write=True)
    name = relative.rpartition("/")[2]
    data = str(args["content"]).encode("utf-8", "surrogateescape")
    with beneath.parent_of(_root(context), relative, "fs.write", create=True) as parent:
        found = beneath.lstat(parent, name)
        if found is not None and not stat.S_ISREG(found.st_mode):
            raise ToolFailure(f"fs.write: `{relative}` is not a regular file")
        mode = None if found is None else stat.S_IMODE(found.st_mode)
        beneath.replace_contents(parent, name, data, mode=mode)
    return _done(f"wrote {len(data)} bytes to {relative}")


def _fs_replace(args: Mapping[str, object], context: ToolContext) -> ToolResult:
    relative = _path(context, args["path"], write=True)
    name = relative.rpartition("/")[2]
    with beneath.parent_of(_root(context), relative, "fs.replace") as parent:
        descriptor = beneath.open_regular(parent, name, relative, "fs.replace")
        try:
            info = os.fstat(descriptor)
            raw = beneath.read_all(descriptor, info.st_size + 1)
        finally:
            os.close(descriptor)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolFailure(f"fs.replace: `{relative}` is not UTF-8 text") from None
        old, new, wanted = str(args["old"]), str(args["new"]), args["count"]
        found = text.count(old)
        if found == 0:
            raise ToolFailure(f"fs.replace: the old text was not found in `{relative}`")
        if wanted is None and found > 1:
            raise ToolFailure(f"fs.replace: the old text occurs {found} times in `{relative}`; "
                              f"include more surrounding text to make it unique, or pass "
                              f"count = {found}")
        if wanted is not None and found != wanted:
            raise ToolFailure(f"fs.replace: the old text occurs {found} times in `{relative}`, "
                              f"not {wanted}")
        beneath.replace_contents(parent, name, text.replace(old, new).encode("utf-8"),
                                 mode=stat.S_IMODE(info.st_mode))
    return _done(f"replaced {found} occurrence{'s' if found > 1 else ''} in {relative}")


def _fs_delete(args: Mapping[str, object], context: ToolContext) -> ToolResult:
    relative = _path(context, args["path"], write=True)
    name = relative.rpartition("/")[2]
    with beneath.parent_of(_root(context), relative, "fs.delete") as parent:
        _require_file(beneath.lstat(parent, name), relative, "fs.delete")
        os.unlink(name, dir_fd=parent)  # unlink removes a symlink itself, never its target
    return _done(f"deleted {relative}")


def _fs_rename(args: Mapping[str, object], context: ToolContext) -> ToolResult:
    old = _path(context, args["path"], write=True)
    new = _path(context, args["to"], write=True)
    root = _root(context)
    old_name, new_name = old.rpartition("/")[2], new.rpartition("/")[2]
    with beneath.parent_of(root, old, "fs.rename") as source:
        _require_file(beneath.lstat(source, old_name), old, "fs.rename")
        with beneath.parent_of(root, new, "fs.rename", create=True) as target:
            if beneath.lstat(target, new_name) is not None:
                raise ToolFailure(f"fs.rename: `{new}` already exists")
            os.rename(old_name, new_name, src_dir_fd=source, dst_dir_fd=target)
    return _done(f"renamed {old} to {new}")


def _require_file(found: os.stat_result | None, relative: str, tool: str) -> None:
    """Files (or a symlink itself) only: a directory would take unjudged files along."""
    if found is None:
        raise ToolFailure(f"{tool}: `{relative}` does not exist")
    if stat.S_ISDIR(found.st_mode):
        raise ToolFailure(f"{tool}: `{relative}` is a directory; {tool} works on files only")


def _patch_apply(args: Mapping[str, object], context: ToolContext) -> ToolResult:
    diff = str(args["diff"]).encode("utf-8", "surrogateescape")
    result, text, truncated = run_tool_process(hardened_argv("apply", "-"), context,
                                   timeout=GIT_APPLY_TIMEOUT_SECONDS, stdin=diff,
                                   env=context.git.env())
    if result.outcome is ToolOutcome.OK:
        return ToolResult(outcome=ToolOutcome.OK, output="patch applied\n" + text, exit_code=0,
                          truncated=truncated, output_bytes=result.output_bytes,
                          duration_ms=elapsed_ms(result))
    first_line = text.strip().splitlines()[0] if text.strip() else failure_word(result)
    return process_result(result, text, truncated, error=f"git apply failed: {first_line}")


def _done(message: str) -> ToolResult:
    return ToolResult(outcome=ToolOutcome.OK, output=message,
                      output_bytes=len(message.encode("utf-8")))


_EXECUTORS: dict[str, Callable[[Mapping[str, object], ToolContext], ToolResult]] = {
    "fs.read": _fs_read, "fs.write": _fs_write, "fs.replace": _fs_replace,
    "fs.delete": _fs_delete, "fs.rename": _fs_rename, "patch.apply": _patch_apply,
    "shell.run": shell_run,
}


@dataclass(frozen=True)
class BuiltinTools:
    """The built-in tools as one value: what a tool runtime that imports this module late (on
    its first call) reaches them through."""

    names: tuple[str, ...]
    guard: Callable[[str, Mapping[str, object], ToolContext], GuardDecision]
    execute: Callable[[str, Mapping[str, object], ToolContext], ToolResult]


BUILTIN_TOOLS = BuiltinTools(TOOL_NAMES, guard, execute)
