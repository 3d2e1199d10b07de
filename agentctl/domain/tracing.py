"""A run as one OpenTelemetry trace, planned from its records: which spans, with which parents,
times and attributes. Sending them is the exporter's job (`execution/otlp.py`).

Ids are derived from the records' ids, not drawn at random, so they are known before the spans
exist: the attempt hands `traceparent(...)` to Claude Code or Codex while it runs, their own
spans nest under its `invoke_agent` span, and a trace sent again (`run trace`) is the same
trace. Names and attributes follow the OpenTelemetry GenAI conventions (`invoke_agent`,
`execute_tool`, `gen_ai.*`) where they exist; agentctl's own facts are under `agentctl.*`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentctl.domain.enums import StepStatus, StepType, ToolDecision
from agentctl.domain.run import Attempt, Run
from agentctl.domain.step import Step, ToolCall
from agentctl.domain.verdict import Verdict

AttributeValue = str | int | float | bool | tuple[str, ...]

PHASES: Mapping[StepType, str] = {
    StepType.PREPARE_WORKSPACE: "workspace", StepType.CLONE_REPOSITORY: "workspace",
    StepType.LOAD_CONTEXT: "agent", StepType.MODEL_PLANNING: "agent",
    StepType.TOOL_CALL: "agent", StepType.APPLY_PATCH: "agent",
    StepType.COLLECT_ARTIFACTS: "collect", StepType.RUN_VERIFIER: "verify",
    StepType.JUDGE_DIFF: "judge", StepType.SUMMARIZE_LOG: "finalize",
    StepType.FINALIZE: "finalize",
}
_PROVIDERS = {"claude": "anthropic", "codex": "openai", "copilot": "openai", "gemini": "gcp.gemini"}


@dataclass(frozen=True, slots=True)
class SpanEvent:
    name: str
    at_ns: int
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PlannedSpan:
    name: str
    span_id: int
    parent_id: int | None
    start_ns: int
    end_ns: int
    attributes: Mapping[str, AttributeValue]
    error: str | None = None  # the status description of a span that failed
    events: tuple[SpanEvent, ...] = ()


@dataclass(frozen=True, slots=True)
class TracePlan:
    trace_id: int
    spans: tuple[PlannedSpan, ...]  # parents before children: a capped export keeps the shape


def _id(bits: int, *parts: str) -> int:
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    value = int.from_bytes(digest[: bits // 8], "big")
    return value or 1  # zero is the invalid id


def trace_id(run_id: str) -> int:
    return _id(128, "trace", run_id)


def agent_span_id(attempt_id: str) -> int:
    return _id(64, "invoke_agent", attempt_id)


def traceparent(run_id: str, attempt_id: str) -> str:
    """W3C trace context naming the attempt's `invoke_agent` span as the parent."""
    return f"00-{trace_id(run_id):032x}-{agent_span_id(attempt_id):016x}-01"


def agent_trace_env(endpoint: str, run_id: str, attempt_id: str) -> dict[str, str]:
    """What Claude Code (and any OTel SDK honouring the standard variables) needs to send its
    own spans to the same collector as children of the attempt's `invoke_agent` span. Traces
    only: the CLIs' metrics and logs stay off."""
    return {"TRACEPARENT": traceparent(run_id, attempt_id),
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none",
            "CLAUDE_CODE_ENABLE_TELEMETRY": "1", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1"}


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def plan_trace(run: Run, attempts: Sequence[Attempt], steps: Sequence[Step],
               calls: Sequence[ToolCall], verdict: Verdict | None) -> TracePlan:
    calls_by_step = {call.step_id: call for call in calls}
    root_id = _id(64, "run", run.run_id)
    common: dict[str, AttributeValue] = {"agentctl.run.id": run.run_id,
                                         "agentctl.spec.digest": run.spec_digest}
    spans: list[PlannedSpan] = []
    children: list[PlannedSpan] = []
    ends = [_ns(run.created_at)]
    agent = run.execution_spec.agent
    agent_name = agent.split(":", 1)[0]
    for attempt in attempts:
        own = [s for s in steps if s.attempt_id == attempt.attempt_id]
        attempt_id = _id(64, "attempt", attempt.attempt_id)
        start = _ns(attempt.started_at)
        end = max([_ns(attempt.ended_at or attempt.last_heartbeat_at or attempt.started_at)]
                  + [_ns(s.ended_at or s.started_at) for s in own])
        ends.append(end)
        spans.append(PlannedSpan(
            "agentctl.attempt", attempt_id, root_id, start, end,
            {**common, "agentctl.attempt.id": attempt.attempt_id,
             "agentctl.attempt.number": attempt.attempt_number,
             "agentctl.attempt.status": attempt.status.value,
             **({"agentctl.failure.code": attempt.failure_code} if attempt.failure_code else {})},
            error=attempt.failure_code))
        phases: dict[str, list[Step]] = {}
        for step in own:
            phases.setdefault(PHASES.get(step.type, "finalize"), []).append(step)
        for phase, members in phases.items():
            first = min(_ns(s.started_at) for s in members)
            last = max(_ns(s.ended_at or s.started_at) for s in members)
            failed = next((s.failure_code or s.status.value for s in members
                           if s.status in (StepStatus.FAILED, StepStatus.TIMED_OUT)), None)
            if phase == "agent":
                phase_id = agent_span_id(attempt.attempt_id)
                attributes: dict[str, AttributeValue] = {
                    **common, "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": agent_name, "gen_ai.agent.id": agent,
                    "agentctl.phase": phase}
                if agent_name in _PROVIDERS:
                    attributes["gen_ai.provider.name"] = _PROVIDERS[agent_name]
                name = f"invoke_agent {agent_name}"
            else:
                phase_id = _id(64, "phase", attempt.attempt_id, phase)
                attributes = {**common, "agentctl.phase": phase}
                name = f"agentctl.phase {phase}"
            spans.append(PlannedSpan(name, phase_id, attempt_id, first, last, attributes,
                                     error=failed))
            children += [_step_span(s, calls_by_step.get(s.step_id), phase_id, common)
                         for s in members]
    root_attributes: dict[str, AttributeValue] = {
        **common, "agentctl.task.id": run.task_id, "agentctl.run.number": run.number,
        "agentctl.run.status": run.status.value, "gen_ai.agent.id": agent}
    events: tuple[SpanEvent, ...] = ()
    if verdict is not None:
        facts: dict[str, AttributeValue] = {
            "agentctl.verdict.status": verdict.status.value,
            "agentctl.verdict.pr_eligibility": verdict.pr_eligibility.value,
            "agentctl.verdict.reasons": tuple(verdict.reasons)}
        root_attributes.update(facts)
        events = (SpanEvent("agentctl.verdict", _ns(verdict.decided_at), facts),)
        ends.append(_ns(verdict.decided_at))
    if run.completed_at is not None:
        ends.append(_ns(run.completed_at))
    root = PlannedSpan("agentctl.run", root_id, None, _ns(run.created_at), max(ends),
                       root_attributes, error=run.failure_summary, events=events)
    return TracePlan(trace_id(run.run_id), (root, *spans, *children))


def _step_span(step: Step, call: ToolCall | None, parent: int,
               common: Mapping[str, AttributeValue]) -> PlannedSpan:
    start = _ns(step.started_at)
    end = max(_ns(step.ended_at or step.started_at), start)
    # A tool span carries what identifies and explains the call, no more: a run may hold tens
    # of thousands, and each attribute is encoded once per span.
    attributes: dict[str, AttributeValue] = {**common, "agentctl.step.id": step.step_id}
    error = step.failure_code if step.status in (StepStatus.FAILED, StepStatus.TIMED_OUT) \
        else None
    if call is not None:
        attributes.update({
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.tool_name,
            "gen_ai.tool.call.id": call.tool_call_id,
            "agentctl.decision": call.decision.value,
            "agentctl.policy.rule": call.matched_rule or "",
            "agentctl.spec.digest": call.spec_digest})
        if call.decision is not ToolDecision.ALLOWED:
            attributes["error.type"] = call.decision.value
            error = call.denial_reason or call.decision.value
        elif call.result is not None and not call.result.ok:
            attributes["error.type"] = call.result.outcome.value
            error = call.result.error or call.result.outcome.value
        return PlannedSpan(f"execute_tool {call.tool_name}", _id(64, "step", step.step_id),
                           parent, start, end, attributes, error=error)
    model = step.attributes.get("model")
    if step.type is StepType.MODEL_PLANNING and isinstance(model, str):
        attributes.update({"gen_ai.operation.name": "chat", "gen_ai.request.model": model})
        for key, name in (("inputTokens", "gen_ai.usage.input_tokens"),
                          ("outputTokens", "gen_ai.usage.output_tokens")):
            value = step.attributes.get(key)
            if isinstance(value, int):
                attributes[name] = value
        return PlannedSpan(f"chat {model}", _id(64, "step", step.step_id), parent, start, end,
                           attributes, error=error)
    attributes.update({"agentctl.step.type": step.type.value,
                       "agentctl.step.status": step.status.value})
    return PlannedSpan(f"agentctl.step {step.type.value}", _id(64, "step", step.step_id),
                       parent, start, end, attributes, error=error)
