"""The path guard, git's own listing of a patch's paths and the budget guard that stand before
every tool call (unidiff's reading of a diff's paths is in `patch_paths`, for `patch.apply` only).

Paths are judged as the workspace-relative posix path the agent named *and* the path symlinks
resolve it to, so a link cannot carry a write out of the workspace, into `.git/` or onto a
forbidden or secret file. The executor gets back the absolute path that was judged, never
the raw argument.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.agent_text import control_character, visible
from agentctl.domain.command_rules import GuardDecision
from agentctl.domain.enums import ToolDecision
from agentctl.domain.globs import first_match
from agentctl.domain.spec import Budget
from agentctl.execution.git import WorkspaceGit, hardened_argv
from agentctl.execution.process import run_to_file

_GIT_TIMEOUT_SECONDS = 60.0
_MAX_LISTING_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PathCheck:
    decision: GuardDecision
    relative: str | None  # normalised workspace-relative posix path when allowed
    absolute: Path | None  # inside the resolved workspace; the final component is not resolved


def check_path(
    workspace: Path, raw: str, *, write: bool, forbidden: Sequence[str],
    secret_files: Sequence[str], allowed: Sequence[str] = (),
) -> PathCheck:
    """Judge one path argument; `write` means the call creates, changes or removes it."""
    relative, check, problem = _normalise(raw)
    if relative is None:
        return _refused(ToolDecision.DENIED_BY_PATH_GUARD, f"path guard: {check}", problem)
    root = workspace.resolve()
    absolute = root / relative
    try:
        resolved = absolute.resolve()
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop (Python < 3.13)
        return _refused(ToolDecision.DENIED_BY_PATH_GUARD, "path guard: unresolvable",
                        f"`{raw}` cannot be resolved: {error}")
    if not resolved.is_relative_to(root):
        return _refused(ToolDecision.DENIED_BY_PATH_GUARD, "path guard: symlink out of workspace",
                        f"`{raw}` resolves through a symlink to {resolved}, outside the workspace")
    target = resolved.relative_to(root).as_posix()
    if target == "." or _in_git_dir(target.split("/")):
        return _refused(ToolDecision.DENIED_BY_PATH_GUARD, "path guard: symlink into .git",
                        f"`{raw}` resolves through a symlink to `{target}`, off limits to tools")
    names = list(dict.fromkeys((relative, target)))
    glob = _first_match(forbidden, names) if write else None
    if glob is not None:
        return _refused(ToolDecision.DENIED_BY_POLICY, f"forbidden: {glob}",
                        f"`{relative}` matches the forbidden glob `{glob}`; tools may not write it")
    glob = _first_match(secret_files, names)
    if glob is not None:
        return _refused(ToolDecision.DENIED_BY_POLICY, f"secret: {glob}",
                        f"`{relative}` matches the secret-file glob `{glob}`; tools may neither "
                        "read nor write it")
    rule = _allowed_rule(names, allowed, write)
    return PathCheck(GuardDecision(ToolDecision.ALLOWED, rule, None), relative, absolute)


def _normalise(raw: str) -> tuple[str | None, str, str]:
    """(relative posix path, "", "") or (None, the check that failed, why); `..` may not climb
    out of the workspace."""
    if not raw.strip():
        return None, "empty path", "the path is empty"
    if "\0" in raw:
        return None, "NUL byte", "the path contains a NUL byte"
    character = control_character(raw)
    if character is not None:  # a name that could rewrite what shows it (a PR body, a log)
        return None, "control character", (f"`{visible(raw)}` contains the control character "
                                           f"{character}; paths may not")
    if raw.startswith(("/", "~")):
        return None, "absolute path", f"`{raw}` is not relative to the workspace"
    if _in_git_dir(raw.split("/")):
        return None, ".git", f"`{raw}` is inside `.git/`, which tools may not touch"
    parts: list[str] = []
    for part in raw.split("/"):
        if part == "..":
            if not parts:
                return None, "outside workspace", f"`{raw}` climbs out of the workspace"
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    if not parts:
        return None, "workspace root", f"`{raw}` names the workspace itself"
    return "/".join(parts), "", ""


def _first_match(patterns: Sequence[str], names: Sequence[str]) -> str | None:
    return next((glob for glob in (first_match(patterns, name) for name in names) if glob), None)


def _in_git_dir(parts: Sequence[str]) -> bool:
    # case-insensitive: on macOS and Windows `.GIT` is the same directory
    return any(part.lower() == ".git" for part in parts)


def _allowed_rule(names: Sequence[str], allowed: Sequence[str], write: bool) -> str:
    if not allowed:
        return "workspace"
    globs = [first_match(allowed, name) for name in names]
    if all(globs):
        return f"allowed: {globs[0]}"
    # the patch boundary check judges the final diff; the tool call itself may go ahead
    return "outside allowed paths" if write else "workspace"


def _refused(decision: ToolDecision, rule: str, reason: str) -> PathCheck:
    return PathCheck(GuardDecision(decision, rule, reason), None, None)


def git_apply_paths(diff: str, *, git: WorkspaceGit, scratch: Path,
                    should_stop: Callable[[], bool] | None = None) -> list[str]:
    """The paths `git apply` itself says it will write, from `git apply --numstat -z`.

    git reads some names differently from unidiff (it drops a traditional diff's space-separated
    timestamp: `+++ b/.env 2020-01-01 ...` writes `.env`), so its own listing is judged too.
    Raises ValueError when git cannot read the diff.
    """
    descriptor, name = tempfile.mkstemp(prefix="numstat-", suffix=".out", dir=scratch)
    os.close(descriptor)
    output = Path(name)
    try:
        result = run_to_file(hardened_argv("apply", "--numstat", "-z", "-"), cwd=git.work_tree,
                             env=git.env(), output=output, timeout=_GIT_TIMEOUT_SECONDS,
                             should_stop=should_stop,
                             stdin=diff.encode("utf-8", "surrogateescape"))
        with output.open("rb") as stream:
            data = stream.read(_MAX_LISTING_BYTES + 1)
    finally:
        output.unlink(missing_ok=True)
    text = data.decode("utf-8", "surrogateescape")
    if result.exit_code != 0:
        first = text.strip().splitlines()[0] if text.strip() else "git apply --numstat failed"
        raise ValueError(f"git cannot read the diff: {first}")
    if len(data) > _MAX_LISTING_BYTES:
        raise ValueError("the diff touches too many files to judge")
    paths: list[str] = []
    for record in text.split("\0"):
        fields = record.split("\t", 2)
        if len(fields) == 3 and fields[2]:
            paths.append(fields[2])
        elif record.strip() and len(fields) != 3:
            paths.append(record)  # a rename's names, or something to judge anyway
    return paths


class BudgetGuard:
    """Counts a run's tool calls and their output against its budget.

    The wall clock starts when the guard is made, i.e. when the agent starts acting.
    """

    def __init__(self, budget: Budget, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._budget = budget
        self._clock = clock
        self._started = clock()
        self.calls = 0
        self.output_bytes = 0
        self.cost_usd = 0.0  # what a native agent spent so far (as its model gateway counted)
        self.tokens = 0

    def check(self) -> GuardDecision | None:
        """A DENIED_BY_BUDGET decision if the next call would go over budget, else None."""
        budget = self._budget
        if self.calls >= budget.max_tool_calls:
            return _over(f"max_tool_calls {budget.max_tool_calls}",
                         f"the run has made {self.calls} tool calls, all its budget allows")
        elapsed = self._clock() - self._started
        if elapsed >= budget.wall_seconds:
            return _over(f"wall_seconds {budget.wall_seconds:g}",
                         f"the agent has run {elapsed:.0f} s of its {budget.wall_seconds:g} s")
        if self.output_bytes >= budget.max_output_bytes:
            return _over(f"max_output_bytes {budget.max_output_bytes}",
                         f"tool calls have produced {self.output_bytes} bytes of output, "
                         f"the budget is {budget.max_output_bytes}")
        if budget.max_cost_usd is not None and self.cost_usd >= budget.max_cost_usd:
            return _over(f"max_cost_usd {budget.max_cost_usd:g}",
                         f"the agent has spent ${self.cost_usd:.4f} on its model, the budget is "
                         f"${budget.max_cost_usd:g}")
        if budget.max_tokens is not None and self.tokens >= budget.max_tokens:
            return _over(f"max_tokens {budget.max_tokens}",
                         f"the agent has spent {self.tokens} model tokens, the budget is "
                         f"{budget.max_tokens}")
        return None

    def add_output(self, output_bytes: int) -> None:
        """Output of a call already counted (a native call's result arrives after its start)."""
        self.output_bytes += max(0, output_bytes)

    def spent(self, *, cost_usd: float, tokens: int) -> None:
        """What a native agent has spent so far (totals, not increments)."""
        self.cost_usd = max(self.cost_usd, cost_usd)
        self.tokens = max(self.tokens, tokens)

    @property
    def wall_seconds(self) -> float:
        return self._budget.wall_seconds

    def seconds_left(self) -> float:
        """Of the wall budget: a call may not run past it."""
        return max(self._budget.wall_seconds - (self._clock() - self._started), 0.0)

    def output_left(self) -> int:
        """Of the output budget: a call is killed once its output goes past it."""
        return max(self._budget.max_output_bytes - self.output_bytes, 0)

    def charge(self, output_bytes: int) -> None:
        """Count one call and the bytes of output it produced."""
        self.calls += 1
        self.output_bytes += max(0, output_bytes)


def _over(limit: str, reason: str) -> GuardDecision:
    return GuardDecision(ToolDecision.DENIED_BY_BUDGET, f"budget: {limit}", reason)
