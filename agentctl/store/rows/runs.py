"""Rows of runs and of what an attempt records as it works: attempts, steps, tool calls,
artifacts and the event log. The evidence it is judged by lives in `evidence`."""

from __future__ import annotations

from agentctl.domain.artifact import Artifact
from agentctl.domain.events import Event
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.store.json_columns import tool_result_text
from agentctl.store.rows import RowMapping, Value


def _tool_result(result: ToolResult) -> Value:
    """Every tool call stores one: spelt out rather than walked (`json_columns`); a call
    without one is NULL, as every optional field."""
    return tool_result_text(result)


RUNS = RowMapping(Run, "run", "run_id", "run")
ATTEMPTS = RowMapping(Attempt, "attempt", "attempt_id", "attempt")
STEPS = RowMapping(Step, "step", "step_id", "step")
TOOL_CALLS = RowMapping(ToolCall, "tool_call", "tool_call_id", "toolcall",
                        encoders={"result": _tool_result})
ARTIFACTS = RowMapping(Artifact, "artifact", "artifact_id", "artifact")
EVENTS = RowMapping(Event, "event", "seq", "event")
"""Events are written by the event log, whose hash covers the exact stored text; read here."""

# The lean reads (store/views.py) decode by these names.
run_from_row = RUNS.from_row
attempt_from_row = ATTEMPTS.from_row
step_from_row = STEPS.from_row
tool_call_from_row = TOOL_CALLS.from_row
artifact_from_row = ARTIFACTS.from_row
event_from_row = EVENTS.from_row
