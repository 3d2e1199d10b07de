"""Tool calls end in a typed outcome, and the record says exactly that: a timeout is TIMED_OUT,
a denial DENIED with its rule, a failure FAILED with its exit code; nothing is read from text."""

from __future__ import annotations

from pathlib import Path

from agentctl.domain.enums import (
    EventType,
    StepStatus,
    StepType,
    ToolDecision,
    ToolOutcome,
    VerdictStatus,
)
from agentctl.services.ports import RunRecord
from tests.pipeline.conftest import Harness
from tests.support.processes import group_is_gone

SLEEPER = ("import os, sys, time; print(os.getpgrp(), flush=True); time.sleep(5); "
           "open(sys.argv[1], 'w').write('too late')")


def tool_steps(record: RunRecord) -> list[tuple[str, StepStatus, str | None]]:
    calls = {call.step_id: call for call in record.tool_calls}
    return [(calls[step.step_id].tool_name, step.status, step.failure_code)
            for step in record.steps if step.type is StepType.TOOL_CALL]




def test_a_shell_run_past_its_timeout_is_recorded_timed_out_and_leaves_nothing_running(
        harness: Harness, tmp_path: Path) -> None:
    # Unsandboxed, so the group id it prints is the host's (test_sandbox covers it sandboxed).
    harness.configure('[sandbox]\nmode = "off"\n')
    marker = tmp_path / "marker"
    record = harness.run(harness.plan({
        "tool": "shell.run", "command": f'python3 -c "{SLEEPER}" {marker}', "timeout": 0.5,
        "on_error": "continue"}))

    (call,) = record.tool_calls
    assert call.result is not None
    assert call.result.outcome is ToolOutcome.TIMED_OUT
    assert tool_steps(record) == [("shell.run", StepStatus.TIMED_OUT, "timed_out")]
    assert group_is_gone(int(call.result.output.split()[0]))
    assert not marker.exists()


def test_a_denied_call_is_recorded_with_its_rule_never_runs_and_the_plan_goes_on(
        harness: Harness, tmp_path: Path) -> None:
    marker = tmp_path / "pushed"
    record = harness.run(harness.plan(
        {"tool": "shell.run", "command": f"git push {marker}"},
        {"tool": "fs.write", "path": "calc/notes.txt", "content": "after the denial\n"},
    ))

    denied, written = record.tool_calls
    assert denied.decision is ToolDecision.DENIED_BY_COMMAND_GUARD
    assert denied.matched_rule == "deny: git push *"
    assert denied.result is None
    assert written.result is not None and written.result.outcome is ToolOutcome.OK
    assert tool_steps(record)[0] == ("shell.run", StepStatus.DENIED, "DENIED_BY_COMMAND_GUARD")
    denials = [e for e in record.events if e.type is EventType.TOOL_CALL_DENIED]
    assert [e.payload["toolCallId"] for e in denials] == [denied.tool_call_id]
    assert not marker.exists()


def test_a_failing_call_stops_the_plan_with_the_exit_code_as_its_failure(
        harness: Harness) -> None:
    record = harness.run(harness.plan(
        {"tool": "shell.run", "command": "python3 -c 'raise SystemExit(3)'"},
        {"tool": "fs.write", "path": "never.txt", "content": "x"},
    ))

    assert tool_steps(record) == [("shell.run", StepStatus.FAILED, "exit_3")]
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_AGENT_COULD_NOT_COMPLETE
    assert "plan step 1" in record.verdict.reasons[0]
    assert "exited with code 3" in record.verdict.reasons[0]


def test_the_event_log_is_in_the_order_things_happened(harness: Harness) -> None:
    """A short step is stored when it ends; its StepStarted still comes before the events of
    what it produced (PatchProduced), and no event is stamped earlier than the one before."""
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "b + a"}))

    events = list(record.events)
    assert [e.created_at for e in events] == sorted(e.created_at for e in events)
    started = {e.step_id: e.seq for e in events if e.type is EventType.STEP_STARTED}
    for event in events:
        if event.step_id in started and event.type is not EventType.STEP_STARTED:
            assert started[event.step_id] < event.seq, event
    produced = next(e for e in events if e.type is EventType.PATCH_PRODUCED)
    assert produced.step_id in started
