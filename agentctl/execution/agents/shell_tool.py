"""Running a tool's process (shell.run, patch.apply's git) and bounding the output a tool
returns, apart from the file tools and the guards so that each module has one job."""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path

from agentctl.domain.enums import ToolOutcome
from agentctl.domain.step import ToolResult
from agentctl.execution.agents.tool_context import ToolContext, ToolFailure
from agentctl.execution.process import Confiner, ProcessResult, run_to_file

# Read a little past the limit, so a secret that straddles the cut is still recognised whole.
REDACTION_SLACK = 1024
_TOKEN_CHARS = 256  # longer than any token the patterns know (keys are matched by BEGIN)


def shell_run(args: Mapping[str, object], context: ToolContext) -> ToolResult:
    command = str(args["command"])
    try:
        runnable: list[str] | str = command if context.policy.allow_shell else shlex.split(command)
    except ValueError as problem:
        raise ToolFailure(f"shell.run: `{command}` cannot be split: {problem}") from None
    asked = float(args["timeout"])  # type: ignore[arg-type]
    left = context.budget.seconds_left() if context.budget else asked
    timeout = min(asked, left)
    result, text, truncated = run_tool_process(runnable, context, timeout=timeout, confine=context.confine)
    waited = f"timed out after {timeout:g} s" + (
        "" if asked <= left else " (what was left of the run's wall budget)")
    error = {ToolOutcome.OK: None, ToolOutcome.TIMED_OUT: waited,
             ToolOutcome.CANCELLED: "cancelled"}.get(result.outcome, failure_word(result))
    return process_result(result, text, truncated, error=error)


def run_tool_process(
    command: list[str] | str, context: ToolContext, *, timeout: float, stdin: bytes | None = None,
    env: Mapping[str, str] | None = None, confine: Confiner | None = None,
) -> tuple[ProcessResult, str, bool]:
    """Run with output to a private scratch file; keep only its redacted, bounded head."""
    descriptor, name = tempfile.mkstemp(prefix="tool-", suffix=".log", dir=context.scratch)
    os.close(descriptor)
    output = Path(name)
    try:
        result = run_to_file(command, cwd=context.workspace, env=env or context.env, output=output,
                             timeout=timeout, should_stop=context.should_stop, stdin=stdin,
                             max_output_bytes=context.budget.output_left() if context.budget
                             else None, confine=confine)
        with output.open("rb") as stream:
            head = stream.read(context.policy.max_result_bytes + REDACTION_SLACK)
    finally:
        output.unlink(missing_ok=True)
    text, truncated = bounded_output(head, result.output_bytes, context)
    return result, text, truncated


def bounded_output(head: bytes, total: int, context: ToolContext) -> tuple[str, bool]:
    """Redact first, then cut to the limit on a character boundary. When there was more than
    was read, the read ends at its last whitespace: a token cut by the read would not be
    recognised as one, and must not leak its first half."""
    limit = context.policy.max_result_bytes
    if total > len(head):
        tail = max(len(head) - _TOKEN_CHARS, 0)
        cut = max(head.rfind(b" ", tail), head.rfind(b"\n", tail), head.rfind(b"\t", tail))
        head = head[:cut + 1] if cut >= 0 else head[:tail]
    text = context.redactor.clean(head.decode("utf-8", "replace"))
    data = text.encode("utf-8")
    if len(data) > limit:
        text = data[:limit].decode("utf-8", "ignore")
    return text, total > limit or len(data) > limit


def process_result(result: ProcessResult, text: str, truncated: bool, *,
                    error: str | None) -> ToolResult:
    outcome = result.outcome
    if outcome is ToolOutcome.OK and error is not None:
        outcome = ToolOutcome.FAILED
    return ToolResult(outcome=outcome, output=text, exit_code=result.exit_code,
                      truncated=truncated, output_bytes=result.output_bytes,
                      duration_ms=elapsed_ms(result), error=error)


def failure_word(result: ProcessResult) -> str:
    if result.output_exceeded:
        return (f"killed for writing past the run's output budget (budget.max_output_bytes): "
                f"its output is cut at {result.output_bytes} bytes")
    if result.exit_code is None:
        return "the command could not be started"
    if result.exit_code < 0:
        return f"killed by signal {-result.exit_code}"
    return f"exited with code {result.exit_code}"


def elapsed_ms(result: ProcessResult) -> int:
    return max(1, round(result.duration_seconds * 1000))
