"""The tool runtime: every request of an agent is guarded, executed if allowed, and recorded.

Denied calls are recorded and answered as denials, never executed. Calls that only touch the
workspace are recorded in one transaction after they ran: the workspace dies with the attempt,
so an effect whose record was lost in a crash can never reach a patch. Calls that may reach
further (shell commands, an external agent) are on record before they start.

The built-in tools (`execution.tools`) are imported at an agent's first call to one: an agent
that is one command (noop, patch:, command:) never makes one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentctl.domain.command_rules import GuardDecision
from agentctl.domain.enums import ArtifactType, ArtifactVisibility, ToolDecision, ToolOutcome
from agentctl.domain.step import CANCELLED, ToolResult, changed_files_attribute
from agentctl.execution.agents.attribution import (
    FILE_TOOLS,
    ChangeTracker,
    file_tool_changes,
    read_state,
    touched_paths,
)
from agentctl.execution.agents.guards import BudgetGuard
from agentctl.execution.agents.tool_context import ToolContext
from agentctl.execution.process import run_to_file
from agentctl.execution.reaper import Process, descendants
from agentctl.execution.sandboxing.sandbox import Jail, Sandbox
from agentctl.services.attempts.confinement import agent_jail, named_paths, record_connections
from agentctl.services.attempts.evidence import json_artifact, log_artifact
from agentctl.services.attempts.recording import arguments_json
from agentctl.services.ports import (
    ApprovalQuestion,
    Approver,
    AttemptLedger,
    CallRequest,
    NewArtifact,
)

if TYPE_CHECKING:
    from agentctl.execution.agents.tools import BuiltinTools

AGENT_EXEC = "agent.exec"
COST_FILE = "agentctl-cost.json"
RECORDED_BEFORE_RUNNING = {"shell.run", AGENT_EXEC}


class ToolRuntime:
    def __init__(self, ledger: AttemptLedger, context: ToolContext, budget: BudgetGuard, *,
                 base_index: Path, approver: Approver | None = None,
                 redact_logs_up_to: int, sandbox: Sandbox | None = None,
                 agent_home: Path | None = None, task_file: Path | None = None,
                 protected: tuple[Path, ...] = (), plan_is_trusted: bool = False,
                 tracker: ChangeTracker | None = None,
                 reap_since: Callable[[frozenset[Process]], int] | None = None) -> None:
        self.ledger = ledger
        self.plan_is_trusted = plan_is_trusted  # a script plan: the requester wrote its commands
        self.sandbox = sandbox
        self.agent_home = agent_home
        self.task_file = task_file
        self.protected = protected
        self.tracker = tracker  # which files each call changed (`changedFiles` on its step)
        # Ends what a command left running (a `setsid` job, which its group's end misses):
        # only where nothing else of the agent's runs beside its calls (a script plan)
        self.reap_since = reap_since
        self.base_index = base_index
        self.context = context
        self.budget = budget
        self.approver = approver
        self.redact_logs_up_to = redact_logs_up_to
        self._transcripts = 0
        self.last_call_id: str | None = None  # the ToolCall of the latest `call`
        self.last_rule: str | None = None  # and the rule that decided it

    @property
    def last_step_number(self) -> int:
        return self.ledger.last_step_number

    def ask(self, tool: str, arguments: Mapping[str, object],
            decision: GuardDecision) -> str | None:
        """The approver's answer about an `ask` call, which becomes the tree's next step."""
        assert self.approver is not None
        return self.approver(ApprovalQuestion(self.ledger.lease.run_id,
                                              self.ledger.last_step_number + 1, tool,
                                              arguments, decision))

    def call(self, tool: str, arguments: Mapping[str, object], *,
             title: str | None = None) -> ToolResult:
        requested_at = self.ledger.now()
        decision = self._decide(tool, arguments)
        approved_by = None
        if decision.decision is ToolDecision.REQUIRES_APPROVAL and self.approver is not None:
            approved_by = self.ask(tool, arguments, decision)
            if approved_by is not None:
                decision = GuardDecision(ToolDecision.ALLOWED, decision.matched_rule, None)
            else:
                decision = GuardDecision(ToolDecision.REQUIRES_APPROVAL, decision.matched_rule,
                                         "declined at the approval prompt")
        clean = self.context.redactor.clean
        self.last_rule = decision.matched_rule
        request = CallRequest(
            tool=tool, arguments_json=arguments_json(arguments, clean),
            decision=decision.decision, matched_rule=decision.matched_rule,
            denial_reason=clean(decision.reason) if decision.reason else None,
            requested_at=requested_at, approved_by=approved_by)
        if not decision.allowed:
            self.budget.charge(0)
            self.last_call_id = self.ledger.finished_call(request, None).tool_call_id
            return ToolResult.denied(decision.decision, request.denial_reason or "denied")
        if tool in RECORDED_BEFORE_RUNNING:
            self.ledger.flush()  # batched calls are on record before anything leaves the workspace
            step, call = self.ledger.begin_call(request)
            jail = self._jail(tool, arguments)
            self.last_call_id = call.tool_call_id
            if self.tracker is not None:
                self.tracker.prepare()
            running = frozenset(descendants()) \
                if self.reap_since is not None and tool == "shell.run" else None
            try:
                result, artifacts = self._executed(tool, arguments, jail)
                if running is not None and self.reap_since is not None:
                    self.reap_since(running)
            except BaseException:  # Ctrl-C or SIGTERM mid-command: close the step, then stop
                self.ledger.end_call(step, call, ToolResult(outcome=ToolOutcome.CANCELLED,
                                                            error=CANCELLED))
                record_connections(self.ledger, jail, made_by=step.step_id,
                                   process=str(arguments.get("command", tool)),
                                   redactor=self.context.redactor)
                raise
            self.ledger.end_call(step, call, result, artifacts,
                                 attributes=self._tracked_changes())
            record_connections(self.ledger, jail, made_by=step.step_id,
                               process=str(arguments.get("command", tool)),
                               redactor=self.context.redactor)
        elif tool in FILE_TOOLS and self.tracker is not None:
            paths = touched_paths(tool, arguments)
            before = read_state(self.context.workspace, paths)
            result, _ = self._executed(tool, arguments)
            changed = file_tool_changes(tool, arguments, before,
                                        read_state(self.context.workspace, paths))
            if changed:
                self.tracker.mark_stale()
                self.tracker.credit(changed)
            attributes = changed_files_attribute(changed, self.context.redactor.clean)
            self.last_call_id = self.ledger.finished_call(
                request, result, attributes=attributes).tool_call_id
        elif tool == "patch.apply" and self.tracker is not None:
            self.tracker.prepare()
            result, _ = self._executed(tool, arguments)
            self.last_call_id = self.ledger.finished_call(
                request, result, attributes=self._tracked_changes()).tool_call_id
        else:
            result, _ = self._executed(tool, arguments)
            self.last_call_id = self.ledger.finished_call(request, result).tool_call_id
        self.budget.charge(result.output_bytes)
        return result

    def _jail(self, tool: str, arguments: Mapping[str, object]) -> Jail | None:
        """The sandbox of a call that spawns a process (None: unconfined, or no process)."""
        if self.sandbox is None:
            return None
        if tool == AGENT_EXEC:
            assert self.agent_home is not None and self.task_file is not None
            return agent_jail(self.sandbox, workspace=self.context.workspace,
                              command=str(arguments["command"]), env=self.context.env,
                              home=self.agent_home, task_file=self.task_file,
                              protected=self.protected)
        if tool == "shell.run":  # nothing but its workspace and the attempt's agent home, and
            assert self.agent_home is not None  # the programs a requester's plan names
            self.agent_home.mkdir(exist_ok=True)
            named = named_paths(str(arguments["command"]), self.protected) \
                if self.plan_is_trusted else ()
            return self.sandbox.jail(self.context.workspace, home=self.agent_home,
                                     read_only=named)
        return None

    def _tracked_changes(self) -> dict[str, object]:
        if self.tracker is None:
            return {}
        return changed_files_attribute(self.tracker.changes(), self.context.redactor.clean)

    def _executed(self, tool: str, arguments: Mapping[str, object], jail: Jail | None = None,
                  ) -> tuple[ToolResult, list[NewArtifact]]:
        """Execute, with the error text redacted too (it may quote a path or a command)."""
        result, artifacts = self._execute(tool, arguments, jail)
        if result.error:
            result = replace(result, error=self.context.redactor.clean(result.error))
        return result, artifacts

    def _decide(self, tool: str, arguments: Mapping[str, object]) -> GuardDecision:
        over_budget = self.budget.check()
        if over_budget is not None:
            return over_budget
        if tool == AGENT_EXEC:  # the requester chose this agent; its own actions are its own
            return GuardDecision(ToolDecision.ALLOWED, "agent: command", None)
        tools = _builtin_tools()
        if tool not in tools.names:
            return GuardDecision(ToolDecision.DENIED_BY_POLICY, None, f"unknown tool {tool!r}")
        return tools.guard(tool, arguments, self.context)

    def _execute(self, tool: str, arguments: Mapping[str, object], jail: Jail | None,
                 ) -> tuple[ToolResult, list[NewArtifact]]:
        if tool != AGENT_EXEC:
            context = replace(self.context, confine=jail) if jail is not None else self.context
            return _builtin_tools().execute(tool, arguments, context), []
        self._transcripts += 1
        transcript = self.context.scratch / f"agent-transcript-{self._transcripts}.log"
        timeout = self.budget.seconds_left()
        process = run_to_file(str(arguments["command"]), cwd=self.context.workspace,
                              env=self.context.env, output=transcript, timeout=timeout,
                              should_stop=self.context.should_stop,
                              max_output_bytes=self.budget.output_left(), confine=jail)
        head = _head(transcript, self.context.policy.max_result_bytes)
        outcome = process.outcome
        result = ToolResult(
            outcome=outcome, output=self.context.redactor.clean(head),
            exit_code=process.exit_code, truncated=process.output_bytes > len(head.encode()),
            output_bytes=process.output_bytes, duration_ms=int(process.duration_seconds * 1000),
            error={ToolOutcome.TIMED_OUT: f"timed out: stopped when the run's wall-clock "
                                          f"budget of {self.budget.wall_seconds:g} s ran out",
                   ToolOutcome.CANCELLED: "cancelled"}.get(outcome,
                   "the run's output budget is spent" if process.output_exceeded else None),
        )
        artifacts = [log_artifact(self.ledger.blobs, transcript, name="agent-transcript.log",
                                  type_=ArtifactType.MODEL_TRANSCRIPT_SUMMARY,
                                  redactor=self.context.redactor,
                                  redact_up_to=self.redact_logs_up_to,
                                  visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER)]
        cost = self._cost_report()
        if cost is not None:
            artifacts.append(cost)
        return result, artifacts

    def _cost_report(self) -> NewArtifact | None:
        """`agentctl-cost.json` left by the agent becomes a COST_REPORT, and leaves the
        workspace so that it never lands in the patch."""
        path = self.context.workspace / COST_FILE
        if not path.is_file() or path.is_symlink() or self._tracked(COST_FILE):
            return None  # a file the repository itself tracks is the repository's business
        with path.open("rb") as reader:
            raw = reader.read(64 * 1024)
        path.unlink()
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = {"invalid": raw.decode("utf-8", errors="replace")[:2000]}
        return json_artifact(self.ledger.blobs, data, name=COST_FILE, type_=ArtifactType.COST_REPORT,
                             redactor=self.context.redactor,
                             visibility=ArtifactVisibility.VISIBLE_TO_REQUESTER)

    def _tracked(self, name: str) -> bool:
        """Whether the base commit tracks `name` (agentctl's own index of the checkout)."""
        listed = self.context.git.run("ls-files", "--cached", "--", name, index=self.base_index,
                                      what="cannot list tracked files", check=False)
        return bool(listed.stdout.strip())


def _head(path: Path, limit: int) -> str:
    with path.open("rb") as reader:
        return reader.read(limit).decode("utf-8", errors="replace")


def _builtin_tools() -> BuiltinTools:
    """The built-in tools (fs.*, patch.apply with unidiff, shell.run), imported on a first call:
    a noop, patch: or command: agent makes none."""
    from agentctl.execution.agents.tools import BUILTIN_TOOLS

    return BUILTIN_TOOLS
