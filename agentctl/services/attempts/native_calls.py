"""Native agents' tool calls through the tool runtime: each hook call is a recorded ToolCall.

Claude Code and Codex execute their tools themselves; agentctl sees each call twice through the
hook: before (PreToolUse: judged by the same guards as a script plan, recorded, answered
allow or deny) and after (PostToolUse: the bounded, redacted result and the files the call
changed, on the same step). An allowed call is on record before the agent runs it. Calls over
agentctl's own MCP server run here in full, through `ToolRuntime.call`.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentctl.domain.command_rules import GuardDecision
from agentctl.domain.enums import (
    ArtifactType,
    ArtifactVisibility,
    StepType,
    ToolDecision,
    ToolOutcome,
)
from agentctl.domain.errors import ModelUnreachable
from agentctl.domain.native_call_ids import call_key
from agentctl.domain.native_tools import NativeAction, NativeCall, native_call
from agentctl.domain.step import Step, ToolCall, ToolResult, changed_files_attribute
from agentctl.domain.tracing import agent_trace_env
from agentctl.execution.agents import (
    AgentOutcome,
    AgentSession,
    AttemptIdentity,
    NativeDecision,
    build_agent,
    tools,
)
from agentctl.execution.agents.attribution import ChangeTracker
from agentctl.execution.agents.hook_binary import cache_dir
from agentctl.execution.gateway.server import Exchange
from agentctl.execution.sandboxing.sandbox import Jail
from agentctl.services.attempts.attempt import AttemptContext
from agentctl.services.attempts.confinement import record_connections
from agentctl.services.attempts.evidence import Redactions, json_artifact, log_artifact
from agentctl.services.attempts.model_exchanges import model_unreachable, record_exchange
from agentctl.services.attempts.recording import arguments_json
from agentctl.services.attempts.runtime import ToolRuntime
from agentctl.services.ports import CallRequest, StepEnd

UNHOOKED = ("a workspace change no recorded call made (agentctl's guard did not see the tool "
            "that made it)")
UNHOOKED_RULE = "native: every change is made by a recorded call"
_EXIT_CODE = re.compile(r"exit(?:ed with)? code:? (-?\d+)", re.IGNORECASE)


@dataclass
class _Pending:
    step: Step
    call: ToolCall
    native: NativeCall


@dataclass
class NativeCalls:
    """The attempt's side of the hook: decisions, results and changed files, on record."""

    runtime: ToolRuntime
    tracker: ChangeTracker | None
    pending: dict[str, _Pending] = field(default_factory=dict)
    # Codex tells a command's exit code only in its stream: its result waits for that line.
    awaiting: list[tuple[_Pending, ToolResult]] = field(default_factory=list)
    exits: list[tuple[str, int | None]] = field(default_factory=list)  # seen, not yet matched
    # Results are recorded after the hook has its answer: the agent goes on meanwhile.
    deferred: list[tuple[_Pending, ToolResult]] = field(default_factory=list)
    stop_reason: str | None = None  # set once a budget is spent: the agent must stop
    calls: int = 0
    # what the model said, one entry per request, as the gateway saw it: the transcript
    said: list[dict[str, object]] = field(default_factory=list)
    unreachable: str | None = None  # the vendor fault the gateway last gave up on
    redactions: Redactions | None = None  # the model requests' texts, redacted once each
    # files that changed while no call of the agent's was under way: a tool the guard never
    # saw made them (its hook did not run for it, or a process no call owns); it ends the attempt
    unhooked: str | None = None

    @classmethod
    def for_runtime(cls, runtime: ToolRuntime) -> NativeCalls:
        return cls(runtime, runtime.tracker)

    # --- PreToolUse -------------------------------------------------------------------------
    def before(self, agent: str, payload: Mapping[str, object]) -> NativeDecision:
        self.settle()
        self._close_awaiting()
        runtime, ledger = self.runtime, self.runtime.ledger
        native = self._native(agent, payload)
        if native.action is NativeAction.GUARDED_ELSEWHERE:
            return NativeDecision(True, "checked by agentctl's MCP server when it runs")
        snapped = native.writes and self._look_for_unhooked()
        requested_at = ledger.now()
        decision = self._decide(native) if self.unhooked is None else GuardDecision(
            ToolDecision.DENIED_BY_POLICY, UNHOOKED_RULE, self.unhooked)
        approved_by = None
        if decision.decision is ToolDecision.REQUIRES_APPROVAL and runtime.approver is not None:
            approved_by = runtime.ask(native.tool_name, native.arguments, decision)
            decision = GuardDecision(ToolDecision.ALLOWED, decision.matched_rule, None) \
                if approved_by is not None else GuardDecision(
                    ToolDecision.REQUIRES_APPROVAL, decision.matched_rule,
                    "declined at the approval prompt")
        elif decision.decision is ToolDecision.REQUIRES_APPROVAL:
            decision = GuardDecision(decision.decision, decision.matched_rule,
                                     f"{decision.reason or 'needs approval'}; this run is not "
                                     "interactive, so it is denied")
        clean = runtime.context.redactor.clean
        recorded = dict(native.arguments)
        if native.action in (NativeAction.WRITE, NativeAction.READ) and native.paths:
            recorded["paths"] = list(native.paths)  # every path judged (apply_patch: all)
        request = CallRequest(
            tool=native.tool_name, arguments_json=arguments_json(recorded, clean),
            decision=decision.decision, matched_rule=decision.matched_rule,
            denial_reason=clean(decision.reason) if decision.reason else None,
            requested_at=requested_at, approved_by=approved_by)
        runtime.budget.charge(0)
        self.calls += 1
        if not decision.allowed:
            ledger.finished_call(request, None)
            if decision.decision is ToolDecision.DENIED_BY_BUDGET:
                self.stop_reason = f"stopped by its budget ({decision.matched_rule}): " \
                                   f"{request.denial_reason}"
            return NativeDecision(False, _reason(decision, request.denial_reason))
        if self.tracker is not None and native.writes and not snapped:
            self.tracker.prepare()
        # what is batched is on record before the agent acts: `begin_call`'s transaction
        # writes it first, in order (a flush of its own was one more commit per call)
        step, call = ledger.begin_call(request)
        key = call_key(payload)
        if key in self.pending:  # a reused id: close the older one rather than lose it
            self._close(self.pending.pop(key), _no_result("superseded by a call with its id"))
        self.pending[key] = _Pending(step, call, native)
        return NativeDecision(True, f"allowed by agentctl ({decision.matched_rule or 'rule'})")

    def _native(self, agent: str, payload: Mapping[str, object]) -> NativeCall:
        tool_input = payload.get("tool_input")
        if not isinstance(tool_input, dict):
            tool_input = {"input": tool_input} if tool_input is not None else {}
        return native_call(agent, str(payload.get("tool_name")), tool_input,
                           str(self.runtime.context.workspace))

    def _decide(self, native: NativeCall) -> GuardDecision:
        over = self.runtime.budget.check()
        if over is not None:
            return over
        return tools.guard_native(native, self.runtime.context)

    # --- PostToolUse ------------------------------------------------------------------------
    def after(self, agent: str, payload: Mapping[str, object], *, failed: bool) -> None:
        pending = self.pending.pop(call_key(payload), None)
        if pending is None:  # ours guarded elsewhere, or denied (a denied call has no result)
            return
        result = self._result(payload, failed=failed)
        if agent == "codex" and pending.native.action is NativeAction.COMMAND \
                and result.exit_code is None:
            ended = self._taken_exit(pending.native.command)
            if ended is not None:
                self._close(pending, _with_exit(result, ended[1]))
                return
            self.awaiting.append((pending, result))
            return
        self.deferred.append((pending, result))

    def settle(self) -> None:
        """Record the results the hook has already answered for (with their changed files)."""
        while self.deferred:
            pending, result = self.deferred.pop(0)
            self._close(pending, result)

    def command_finished(self, command: str, exit_code: int | None) -> None:
        """The agent's stream says how a command ended: the call waiting for it is closed."""
        for index, (pending, result) in enumerate(self.awaiting):
            if _same_command(pending.native.command, command):
                del self.awaiting[index]
                self._close(pending, _with_exit(result, exit_code))
                return
        self.exits.append((command, exit_code))

    def _close_awaiting(self) -> None:
        while self.awaiting:
            pending, result = self.awaiting.pop(0)
            self._close(pending, result)

    def _result(self, payload: Mapping[str, object], *, failed: bool) -> ToolResult:
        response = payload.get("tool_response", payload.get("error", ""))
        text, exit_code, error = _response_text(response)
        if failed and exit_code is None:
            match = _EXIT_CODE.search(text)
            exit_code = int(match.group(1)) if match else None
        redactor = self.runtime.context.redactor
        limit = self.runtime.context.policy.max_result_bytes
        clean = redactor.clean(text)
        data = clean.encode("utf-8")
        bounded = data[:limit].decode("utf-8", "ignore")
        ok = not failed and (exit_code in (None, 0)) and not error
        duration = payload.get("duration_ms")
        return ToolResult(
            outcome=ToolOutcome.OK if ok else ToolOutcome.FAILED, output=bounded,
            exit_code=exit_code, truncated=len(data) > limit, output_bytes=len(text.encode()),
            duration_ms=duration if isinstance(duration, int) else 0,
            error=None if ok else redactor.clean(error or _first_line(text) or "failed"))

    def _close(self, pending: _Pending, result: ToolResult) -> None:
        attributes: dict[str, object] = {}
        if self.tracker is not None and pending.native.writes:
            attributes = changed_files_attribute(self.tracker.changes(),
                                                 self.runtime.context.redactor.clean)
        self.runtime.ledger.end_call(pending.step, pending.call, result, attributes=attributes)
        self.runtime.budget.add_output(result.output_bytes)


    def close_pending(self) -> None:
        """The agent ended with calls it never reported back on: closed, not left STARTED."""
        self.settle()
        self._close_awaiting()
        for key in list(self.pending):
            pending = self.pending.pop(key)
            self._close(pending, self._unreported(pending))
        self._look_for_unhooked()  # after its last call too

    def _unreported(self, pending: _Pending) -> ToolResult:
        """A call the agent never gave a result for (a Codex `exec_command` yielded and never
        polled): failed, with its command's exit code when agentctl's own run saw it."""
        result = _no_result("the agent reported no result")
        if pending.native.action is NativeAction.COMMAND:
            ended = self._taken_exit(pending.native.command, with_code=True)
            if ended is not None:
                return replace(result, exit_code=ended[1], error=(
                    f"the agent reported no result (its command exited with code {ended[1]})"))
        return result

    def _taken_exit(self, asked: str, *,
                    with_code: bool = False) -> tuple[str, int | None] | None:
        """The first exit on record (`command_finished`) of the command the hook saw as `asked`
        (one with an exit code, `with_code`), taken off the list: each exit closes one call."""
        for index, (ran, code) in enumerate(self.exits):
            if (code is not None or not with_code) and _same_command(asked, ran):
                return self.exits.pop(index)
        return None

    def unhooked_changes(self) -> str | None:
        """Why the attempt must end: files changed that no recorded call accounts for."""
        return self.unhooked

    def _look_for_unhooked(self) -> bool:
        """Snapshot the work tree while no call is under way (none could have made what changed
        since the last snapshot, which closed the last call's changes); a change is unhooked.
        Whether it took the snapshot."""
        if self.tracker is None or self.pending or self.awaiting or self.unhooked is not None:
            return False
        known = set(self.tracker.between)
        self.tracker.prepare()
        changed = sorted(self.tracker.between - known)
        if changed:
            named = ", ".join(changed[:5]) + (f" (+{len(changed) - 5} more)"
                                              if len(changed) > 5 else "")
            self.unhooked = self.runtime.context.redactor.clean(f"{UNHOOKED}: {named}")
        return True

    # --- budgets ----------------------------------------------------------------------------
    def spent(self, *, cost_usd: float, tokens: int) -> None:
        budget = self.runtime.budget
        budget.spent(cost_usd=cost_usd, tokens=tokens)

    def over_budget(self) -> str | None:
        """Why the agent must stop now, if a budget is spent."""
        if self.stop_reason is not None:
            return self.stop_reason
        over = self.runtime.budget.check()
        if over is not None and over.matched_rule and ("max_cost_usd" in over.matched_rule
                                                       or "max_tokens" in over.matched_rule):
            self.stop_reason = f"stopped by its budget ({over.matched_rule}): {over.reason}"
        return self.stop_reason

    # --- the agent's own stream as evidence ------------------------------------------------
    def exchange(self, exchange: Exchange) -> None:
        """One model request as the gateway saw it, on record (`record_exchange`)."""
        redactor = self.runtime.context.redactor
        if self.redactions is None or self.redactions.redactor != redactor:
            self.redactions = Redactions(redactor)
        said = record_exchange(self.runtime.ledger, self.redactions, exchange)
        if said is not None:
            self.said.append(said)
        if exchange.refusal is None:  # the vendor fault the CLI was last answered with
            self.unreachable = exchange.fault if exchange.gave_up else None

    def report(self, stream: Path, report: Mapping[str, object]) -> None:
        """The transcript and the spend as artifacts of one SUMMARIZE_LOG step. The transcript
        is what the model sent, as the gateway saw it: the CLI's stdout is a file its tool
        processes can append to (`/proc/<pid>/fd/1`), so it is kept only as an internal log
        of what the CLI claimed."""
        runtime, ledger = self.runtime, self.runtime.ledger
        context = runtime.context
        step = ledger.begin_step(StepType.SUMMARIZE_LOG, "agent transcript and cost",
                                 live=False)
        artifacts = [
            json_artifact(ledger.blobs, {"source": "gateway", "turns": self.said},
                          name="model-transcript.json",
                          type_=ArtifactType.MODEL_TRANSCRIPT_SUMMARY, redactor=context.redactor,
                          visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER),
            json_artifact(ledger.blobs, {**report, "toolCalls": self.calls},
                          name="cost-report.json", type_=ArtifactType.COST_REPORT,
                          redactor=context.redactor,
                          visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER)]
        if stream.is_file():
            artifacts.append(log_artifact(
                ledger.blobs, stream, name=stream.name, type_=ArtifactType.COMMAND_LOG,
                redactor=context.redactor, redact_up_to=runtime.redact_logs_up_to,
                visibility=ArtifactVisibility.INTERNAL_ONLY,
                metadata={"note": "the agent CLI's own output: its claims, not evidence"}))
        tokens = report.get("totalTokens")
        ledger.end_step(step, StepEnd(artifacts=artifacts, attributes={
            "costUsd": report.get("costUsd"), "tokens": tokens,
            "permissionDenials": len(report.get("permissionDenials") or []),  # type: ignore[arg-type]
            "summary": f"${report.get('costUsd')}, {tokens} tokens, {self.calls} tool calls"}))

    def network(self, jail: Jail, *, agent: str, command: str) -> None:
        """Every connection the CLI process tried (its model endpoint, anything else), as
        `net.connect` ToolCalls made by the agent process."""
        record_connections(self.runtime.ledger, jail, made_by=f"agent:{agent}", process=command,
                           redactor=self.runtime.context.redactor)

    # --- a message from no source allowed to send it ----------------------------------------
    def forged(self, tool: str, arguments: Mapping[str, object], why: str) -> None:
        """A request the attempt refused as forged is evidence too: on record as denied."""
        ledger, clean = self.runtime.ledger, self.runtime.context.redactor.clean
        ledger.finished_call(CallRequest(
            tool=tool[:100], arguments_json=arguments_json(dict(arguments), clean),
            decision=ToolDecision.DENIED_BY_POLICY, matched_rule="forged request",
            denial_reason=clean(why), requested_at=ledger.now()), None)
        ledger.flush()

    # --- agentctl's own tools, over MCP -----------------------------------------------------
    def run_tool(self, tool: str, arguments: Mapping[str, object],
                 ) -> tuple[ToolResult, str, str | None]:
        """A guarded tool call over MCP; the result, its ToolCall's id and the deciding rule."""
        runtime = self.runtime
        result = runtime.call(tool, arguments, title=f"mcp {tool}")
        self.calls += 1
        if result.decision is ToolDecision.DENIED_BY_BUDGET:
            self.stop_reason = f"stopped by its budget: {result.error}"
        return result, runtime.last_call_id or "", runtime.last_rule


def _reason(decision: GuardDecision, reason: str | None) -> str:
    rule = f" (rule: {decision.matched_rule})" if decision.matched_rule else ""
    return f"agentctl denied this call, {decision.decision.value}{rule}: {reason or 'denied'}"


def _response_text(response: object) -> tuple[str, int | None, str | None]:
    """The text a tool answered, its exit code and error if it says; whatever shape it has."""
    if isinstance(response, str):
        return response, None, None
    if isinstance(response, dict):
        code = next((response[key] for key in ("exit_code", "exitCode", "returncode")
                     if isinstance(response.get(key), int)), None)
        parts = [str(response[key]) for key in ("stdout", "output", "aggregated_output",
                                                "stderr", "content", "result")
                 if isinstance(response.get(key), str) and response.get(key)]
        error = response.get("error")
        text = "\n".join(parts) if parts else json.dumps(response, default=str)[:65536]
        interrupted = response.get("interrupted") is True
        return text, code, str(error) if error else ("interrupted" if interrupted else None)
    if isinstance(response, list):
        return json.dumps(response, default=str)[:65536], None, None
    return "", None, None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _same_command(asked: str, ran: str) -> bool:
    """Whether the stream's command (`/bin/bash -lc '...'`) is the one the hook saw."""
    if asked == ran or asked in ran:
        return True
    try:
        words = shlex.split(ran)
    except ValueError:
        return False
    return bool(words) and words[-1] == asked


def _with_exit(result: ToolResult, exit_code: int | None) -> ToolResult:
    if exit_code is None or exit_code == 0:
        return replace(result, exit_code=exit_code)
    return replace(result, outcome=ToolOutcome.FAILED, exit_code=exit_code,
                   error=result.error or f"exited with code {exit_code}")


def _no_result(why: str) -> ToolResult:
    return ToolResult(outcome=ToolOutcome.FAILED, error=why)


def unreachable_model(session: AgentSession) -> str | None:
    """The vendor fault a claude/codex session's gateway last gave up on, if any."""
    native = session.native
    return native.unreachable if isinstance(native, NativeCalls) else None


def native_session(ctx: AttemptContext, runtime: ToolRuntime,
                   session: AgentSession) -> AgentSession:
    """A claude/codex session: the hook's counterpart, where the hook reaches the attempt,
    the frozen launch settings, the wall clock; with a trace configured, the trace context."""
    lease = ctx.ledger.lease
    if ctx.trace_endpoint:
        session = replace(session, env={**session.env, **agent_trace_env(
            ctx.trace_endpoint, lease.run_id, lease.attempt_id)})
    return replace(session, native=NativeCalls.for_runtime(runtime),
                   identity=AttemptIdentity(ctx.dirs.root, lease.attempt_id),
                   settings=ctx.spec.agent_settings, wall_seconds=runtime.budget.seconds_left,
                   sandbox=runtime.sandbox, cassette=ctx.cassette,
                   hook_cache=cache_dir(ctx.state_home) if ctx.state_home else None)


def run_native(ctx: AttemptContext, runtime: ToolRuntime, session: AgentSession) -> AgentOutcome:
    """A claude/codex attempt's agent, run in its `native_session`; a failure that follows a
    vendor fault its gateway gave up on (no cassette replaying it) is ModelUnreachable, which a
    new attempt may get past, not the agent's."""
    session = native_session(ctx, runtime, session)
    outcome = build_agent(ctx.spec.agent_spec).run(session)
    fault = unreachable_model(session)
    if outcome.error is not None and fault is not None and ctx.cassette is None:
        raise ModelUnreachable(model_unreachable(fault))
    return outcome
