"""What Claude Code and Codex share as agents of agentctl: a private home per attempt, hooks that
reach the attempt over its socket, the prompt, a headless launch, the stream read as evidence.

Each message on the socket is checked against its source: the hooks and agentctl's MCP server
carry distinct keys, and a request with the wrong one (or none) is refused and recorded as a
forged call. In a sandboxed run every native shell command runs in a jail of its own, outside
the CLI's sandbox (`tool_jail`): no tool process can read those keys, reach the socket or open
the CLI's file descriptors (`shell_routing`: a call given back while its command runs).

The CLI runs on a thread of its own (`launch_agent`, the one place a sandbox may wrap); this
thread serves the hook socket, so every record is written by the attempt's one writer. A
budget spent, the wall clock out or a cancellation stops the CLI's whole process tree.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from agentctl.domain.agent import AgentSpec, Arming, NativeAgentSettings
from agentctl.domain.cassette import attempt_names
from agentctl.domain.errors import AgentctlError, LeaseLost
from agentctl.domain.model_routes import GUARD_NOT_LOADED
from agentctl.domain.native_tools import NativeAction, native_call
from agentctl.domain.serialize import to_json
from agentctl.execution.agents import AgentOutcome, AgentSession, AttemptIdentity, NativeTools
from agentctl.execution.agents.channel import claimed_call, forgery, hook_command, mcp_command
from agentctl.execution.agents.hook_binary import HookChoice, native_hook
from agentctl.execution.agents.hook_socket import BridgeServer, Credentials, Source, refused
from agentctl.execution.agents.native_launch import (
    Launch,
    agent_jail,
    collector_endpoints,
    frozen_spec,
    guard_hold,
    launch_agent,
    prompt_for,
    tool_env,
)
from agentctl.execution.agents.shell_routing import ShellRouting
from agentctl.execution.agents.stream import StreamReader, StreamState
from agentctl.execution.agents.tool_jail import ToolJails
from agentctl.execution.gateway.attach import attach, claim_warnings, gateway_report
from agentctl.execution.gateway.guard import Guard
from agentctl.execution.gateway.server import Gateway
from agentctl.execution.process import ProcessResult
from agentctl.execution.sandboxing.sandbox import model_endpoints
from agentctl.hooks import wire

SERVE_SECONDS = 0.02


class NativeAgent:
    """The shared run loop; `ClaudeAgent` and `CodexAgent` say how to launch and read."""

    name = "native"
    # whether a command's exit code closes its call (Codex's PostToolUse does not carry it)
    waits_for_exit_codes = False
    # how its guard proves to the model gateway that it is loaded in the CLI's process (an
    # `Arming` value): its session-start hook, or a header a guard inside the CLI adds
    arming: str = Arming.SESSION_START
    # how the CLI's stderr lines that never say why it ended begin (start-up notices)
    quiet_lines: tuple[str, ...] = ()
    # whether the CLI starts agentctl's hook command (opencode's guard is a plugin instead)
    starts_hook = True

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec
        self._gateway: Gateway | None = None
        self._shells: ShellRouting | None = None  # in a sandboxed run, once it runs
        self.keys = Credentials()  # fresh per attempt (`run` makes them)
        # set when the CLI's session-start hook reached the attempt: agentctl's configuration
        # was loaded in that process
        self.guard_loaded = threading.Event()

    # --- what each agent says ---------------------------------------------------------------
    def launch(self, session: AgentSession, settings: NativeAgentSettings, home: Path,
               prompt: str, hook: str, mcp: list[str]) -> Launch:
        raise NotImplementedError

    def endpoints(self, session: AgentSession, settings: NativeAgentSettings) -> tuple[str, ...]:
        """The model API hosts (`host:port`) its process may reach, and the trace collector
        when the run is traced."""

        return model_endpoints(session.env) + collector_endpoints(session.env)

    def read(self, event: Mapping[str, object], state: StreamState) -> None:
        raise NotImplementedError

    def output_told(self, result: str) -> str:
        """The command's output in a shell call's result as the CLI gave it to its model."""
        return result

    # --- the run ----------------------------------------------------------------------------
    def run(self, session: AgentSession) -> AgentOutcome:
        native, identity, settings = session.native, session.identity, session.settings
        if native is None or identity is None or settings is None:
            return AgentOutcome(error=f"{self.name} needs a native tool bridge")
        if shutil.which(settings.command, path=session.env.get("PATH") or None) is None:
            return AgentOutcome(error=f"{self.name} cannot start: {settings.command}: no such "
                                      f"executable (set [agents.{self.name}] command)")
        keys = self.keys = Credentials()
        self.guard_loaded = threading.Event()
        budget = frozen_spec(session).get("budget", {})
        guard = Guard(Arming(self.arming), self.guard_loaded, keys.guard,
                      hold_seconds=guard_hold(budget))
        try:  # every model request goes through agentctl: the real key stays out here
            attached = attach(self.name, session.env, settings, budget,
                              cassette=session.cassette,
                              names=attempt_names(str(identity.private), identity.attempt_id),
                              guard=guard)
        except ValueError as error:
            return AgentOutcome(error=f"{self.name} cannot start its model gateway: {error}")
        session = replace(session, env=attached.env)
        settings, self._gateway = attached.settings, attached.gateway
        home = self.home_dir(identity)
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        stream = session.task_file.parent / f"{self.name}-stream.jsonl"
        hook = native_hook(session.hook_cache, os.environ) if self.starts_hook \
            else HookChoice(None, "no hook command")
        launch = self.launch(session, settings, home, prompt_for(session),
                             hook_command(self.name, identity, keys.hook, hook.binary),
                             mcp_command(identity, keys.mcp))
        if hook.binary is not None:  # its sandbox shows the compiled hook, read-only
            launch = replace(launch, read_only=(*launch.read_only, hook.binary.parent))
        state = StreamState()
        reader = StreamReader(stream)
        stop = threading.Event()
        outcome: list[ProcessResult] = []
        timeout = session.wall_seconds()
        jail = agent_jail(session, launch, home, self.endpoints(session, settings))
        if jail is None:  # no private /tmp: its temporary files stay with the attempt instead
            temporary = home / "tmp"
            temporary.mkdir(mode=0o700, exist_ok=True)
            launch = replace(launch, env={**launch.env, "TMPDIR": str(temporary)})
        self._shells = None
        if jail is not None and session.sandbox is not None:
            self._shells = ShellRouting(
                self.name, ToolJails(session.sandbox, session.workspace, tool_env(session.env),
                                     home / ".agentctl" / "calls"),
                wall_left=session.wall_seconds, output_told=self.output_told)
            attached.gateway.on_request = self._shells.model_asked
        server = BridgeServer(
            identity, lambda message, source: self._handle(message, source, native, reader,
                                                           state, session), keys)

        def work() -> None:
            outcome.append(launch_agent(
                launch.argv, env=launch.env, cwd=session.workspace, output=stream,
                timeout=timeout, should_stop=lambda: stop.is_set() or session.should_stop(),
                jail=jail))

        thread = threading.Thread(target=work, name=f"agentctl-{self.name}", daemon=True)
        try:
            thread.start()
            while thread.is_alive():
                server.serve(SERVE_SECONDS)
                native.settle()
                self._follow(reader, state, native, session)
                if native.over_budget() is not None or attached.gateway.halted \
                        or guard.refused or native.unhooked_changes() is not None:
                    stop.set()
        except BaseException:
            stop.set()
            thread.join()
            raise
        finally:
            if self._shells is not None:
                self._shells.close()
            server.close()
            attached.gateway.close()
            if not home.is_relative_to(identity.private):  # the attempt's dir goes anyway
                shutil.rmtree(home, ignore_errors=True)
        thread.join()
        self._follow(reader, state, native, session)
        native.close_pending()
        if jail is not None:
            native.network(jail, agent=self.name, command=shlex.join(launch.argv[:1]))
        last = _last_plain_line(stream, self.quiet_lines)
        report = gateway_report(self.report(state), attached.gateway)
        native.report(stream, report)
        ended = self.outcome(outcome[0] if outcome else None, state, native, timeout)
        ended = replace(ended, warnings=claim_warnings(self.name, report))
        if attached.gateway.halted:
            return AgentOutcome(error=f"the replay stopped: "
                                      f"{attached.gateway.halted.splitlines()[0]}")
        if guard.refused:  # its model got nothing: no call of it can have gone unguarded
            return AgentOutcome(error=f"{GUARD_NOT_LOADED}: {guard.refused}",
                                infrastructure=f"{GUARD_NOT_LOADED}: {guard.refused}")
        unhooked = native.unhooked_changes()
        if unhooked is not None:  # the record misses what made it: nothing is judged
            return AgentOutcome(error=unhooked, infrastructure=unhooked)
        if ended.error and last and outcome and outcome[0].exit_code not in (0, None):
            return AgentOutcome(error=f"{ended.error}: {last}")
        return ended

    def home_dir(self, identity: AttemptIdentity) -> Path:
        return identity.private / "agent-home"

    def _handle(self, message: dict[str, object], source: Source, native: NativeTools,
                reader: StreamReader, state: StreamState,
                session: AgentSession) -> dict[str, object]:
        self._follow(reader, state, native, session)  # its reasoning is on record first
        event, payload = message.get("event"), message.get("input")
        try:
            forged = forgery(event, source, message, session)
            if forged is not None:
                native.forged(*claimed_call(self.name, message), forged)
                return refused(forged)
            if event == "tool":
                tool, arguments = message.get("tool"), message.get("arguments")
                if not isinstance(tool, str) or not isinstance(arguments, dict):
                    return refused("a tool request needs a tool name and arguments")
                result, call_id, rule = native.run_tool(tool, arguments)
                return {"ok": True, "result": _result_json(result), "toolCallId": call_id,
                        "matchedRule": rule}
            if not isinstance(payload, dict):
                return refused("the hook sent no tool call")
            if event == "PreToolUse":
                decision = native.before(self.name, payload)
                answer: dict[str, object] = {
                    "decision": wire.ALLOW if decision.allow else wire.DENY,
                    "reason": decision.reason}
                if decision.allow and self._shells is not None \
                        and self._is_shell(payload, session):
                    routed = self._shells.route(payload)
                    if routed is None:  # allowed, but it could only run unjailed: it does not
                        native.after(self.name, {**payload, "tool_response": {
                            "error": "not run: no command string to run in a tool jail"}},
                            failed=True)
                        return {"decision": wire.DENY, "reason": (
                            "agentctl runs shell commands in a jail of their own and could not "
                            "route this one (no `command` string): not run")}
                    answer["updatedInput"] = json.dumps(routed, separators=(",", ":"))
                return answer
            if event == "PreSkillShellCommand":
                return self._skill_command(payload, native)
            if event == "SessionStart":
                self.guard_loaded.set()
                return {"ok": True}
            if event in ("PostToolUse", "PostToolUseFailure"):
                failed = event == "PostToolUseFailure"
                if self._shells is not None:
                    payload, failed = self._shells.returned(payload, failed=failed)
                native.after(self.name, payload, failed=failed)
                return {"ok": True}
            return refused(f"unknown hook event {event!r}")
        except LeaseLost:
            raise  # the attempt is over: the hook gets no answer, which denies
        except (AgentctlError, OSError, ValueError) as error:
            # What the agent asked for was refused or malformed: a denial it can read. Anything
            # else (a KeyError, a TypeError) is a bug of ours, never read as a denial: it ends
            # the attempt with its traceback (FAILURE_REPORT), once.
            return refused(f"{type(error).__name__}: {error}")

    def _skill_command(self, payload: dict[str, object],
                       native: NativeTools) -> dict[str, object]:
        """A shell command a skill or slash command embeds (Claude Code's PreSkillShellCommand):
        checked and recorded as a command, named by its skill; allowed or denied only, since
        its input cannot be replaced. Claude Code runs it itself, so in a sandboxed run (where
        every command runs in a tool jail of its own) it is not run."""
        tool_input = payload.get("tool_input")
        call = {**payload, "tool_input": {
            **(tool_input if isinstance(tool_input, dict) else {}),
            "skill": str(payload.get("command_name") or "")}}
        decision = native.before(self.name, call)
        if decision.allow and self._shells is not None:
            reason = ("agentctl runs shell commands in a jail of their own, and a skill's "
                      "shell command runs in the agent's process instead: not run")
            native.after(self.name, {**call, "tool_response": {"error": reason}}, failed=True)
            return {"decision": wire.DENY, "reason": reason}
        return {"decision": wire.ALLOW if decision.allow else wire.DENY,
                "reason": decision.reason}

    def _is_shell(self, payload: Mapping[str, object], session: AgentSession) -> bool:
        """Whether the call runs a shell command (to be routed into a tool jail)."""

        tool_input = payload.get("tool_input")
        call = native_call(self.name, str(payload.get("tool_name")),
                           tool_input if isinstance(tool_input, dict) else {},
                           str(session.workspace))
        return call.action is NativeAction.COMMAND

    def _follow(self, reader: StreamReader, state: StreamState, native: NativeTools,
                session: AgentSession) -> None:
        ran, answered = len(state.commands), len(state.results)
        for event in reader.lines():
            self.read(event, state)
        shells = self._shells
        for done in shells.finished() if shells is not None else ():
            if self.waits_for_exit_codes:  # from agentctl's own run, not the CLI's stream
                native.command_finished(done.command, done.exit_code)
            native.network(done.jail, agent=self.name, command=done.command)
        for key, why in shells.ended_as_given() if shells is not None else ():
            native.after(self.name, {"tool_use_id": key, "tool_response": {"error": why}},
                         failed=True)
        gateway = self._gateway
        for exchange in gateway.drain() if gateway is not None else ():
            native.exchange(exchange)  # the model's side, from where it crosses the boundary
        for payload, failed in state.results[answered:]:
            native.after(self.name, payload, failed=failed)
        if shells is None:  # unsandboxed: the CLI ran its commands itself
            for command, exit_code in state.commands[ran:]:
                native.command_finished(command, exit_code)
        if gateway is not None:  # never the stream's figures: any tool process can append
            native.spent(cost_usd=gateway.cost_usd, tokens=gateway.tokens)

    def report(self, state: StreamState) -> dict[str, object]:
        return {"agent": self.name, "model": self.spec.value or None,
                "costUsd": round(state.cost_usd, 6), "inputTokens": state.input_tokens,
                "outputTokens": state.output_tokens, "totalTokens": state.tokens,
                "turns": state.turns, "permissionDenials": state.denials,
                "error": state.error, **state.extra,
                **({"usageFindings": state.usage_findings} if state.usage_findings else {})}

    def outcome(self, process: ProcessResult | None, state: StreamState, native: NativeTools,
                timeout: float) -> AgentOutcome:
        stopped = native.over_budget()
        if stopped is not None:
            return AgentOutcome(error=f"the agent was {stopped}")
        if process is None:
            return AgentOutcome(error=f"{self.name} did not start")
        if process.timed_out:
            return AgentOutcome(error=f"{self.name} was stopped when the run's wall budget ran "
                                      f"out ({timeout:g} s)")
        if process.cancelled:
            return AgentOutcome(error=f"{self.name} was stopped: the run was cancelled")
        if state.error is not None:
            return AgentOutcome(error=f"{self.name} could not complete: {state.error}")
        if process.exit_code != 0:
            return AgentOutcome(error=f"{self.name} exited with {process.exit_code}")
        if not state.finished:
            return AgentOutcome(error=f"{self.name} ended without a final result")
        return AgentOutcome()


def _last_plain_line(stream: Path, quiet: tuple[str, ...] = ()) -> str:
    """The CLI's last word that is not part of its JSON stream (an error on stderr), past the
    lines that begin as `quiet` ones do."""
    try:
        with stream.open("rb") as reader:
            start = max(stream.stat().st_size - 4096, 0)
            reader.seek(start)
            tail = reader.read().decode("utf-8", "replace")
    except OSError:
        return ""
    if start:  # the first line is the end of a line that began before: none of its words
        tail = tail.partition("\n")[2]
    lines = [line.strip() for line in tail.splitlines()
             if line.strip() and not line.lstrip().startswith(("{", *quiet))]
    return lines[-1][:300] if lines else ""


def _result_json(result: object) -> dict[str, object]:

    value = to_json(result)
    return value if isinstance(value, dict) else {}
