"""What Claude Code and Codex share as agents of agentctl: a private home per attempt, hooks that
reach the attempt over its socket, the prompt, a headless launch, the stream read as evidence.

Each message on the socket is checked against its source: the hooks and agentctl's MCP server
carry distinct keys, and a request with the wrong one (or none) is refused and recorded as a
forged call. In a sandboxed run every native shell command runs in a jail of its own, outside
the CLI's sandbox (`tool_jail`): no tool process can read those keys, reach the socket or open
the CLI's file descriptors. A shell call whose PostToolUse comes while its command still runs
has that command ended with its jail and is recorded failed with why. A CLI that gives a call
back to its model with no PostToolUse (Codex's `exec_command` past `yield_time_ms`) is held
instead: the model request carrying the call's result waits at the gateway until the command
ends, so no other call runs meanwhile and the command's writes are its call's.

The CLI runs on a thread of its own (`launch_agent`, the one place a sandbox may wrap); this
thread serves the hook socket, so every record is written by the attempt's one writer. A
budget spent, the wall clock out or a cancellation stops the CLI's whole process tree.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentctl.domain.agent import GUARD_HOLD_SECONDS, AgentSpec, Arming, NativeAgentSettings
from agentctl.domain.cassette import attempt_names
from agentctl.domain.errors import AgentctlError, LeaseLost
from agentctl.domain.model_routes import GUARD_NOT_LOADED
from agentctl.domain.native_call_ids import answered_calls, call_key
from agentctl.execution.agents import AgentOutcome, AgentSession, AttemptIdentity, NativeTools
from agentctl.execution.agents.channel import claimed_call, forgery, hook_command, mcp_command
from agentctl.execution.agents.hook_binary import HookChoice, native_hook
from agentctl.execution.agents.hook_socket import BridgeServer, Credentials, Source, refused
from agentctl.execution.agents.stream import StreamReader, StreamState
from agentctl.execution.agents.tool_jail import ToolJails
from agentctl.execution.gateway.attach import attach, claim_warnings, gateway_report
from agentctl.execution.gateway.guard import Guard
from agentctl.execution.gateway.server import Gateway
from agentctl.execution.process import ProcessResult, run_to_file
from agentctl.hooks import wire

if TYPE_CHECKING:
    from agentctl.execution.sandboxing.sandbox import Jail
from urllib.parse import urlsplit

import agentctl
from agentctl.domain.native_tools import NativeAction, native_call
from agentctl.domain.serialize import to_json
from agentctl.execution.gateway.keys import KEY_VARIABLES, URL_VARIABLES
from agentctl.execution.sandboxing.sandbox import loopback_forwards, model_endpoints, program_dirs

SERVE_SECONDS = 0.02


def returned_running(agent: str) -> str:
    """What is recorded for a jailed shell call its CLI returned (its PostToolUse) while the
    command still ran (Copilot past `initial_wait`)."""
    return (f"{agent} returned the call while its command still ran: agentctl ended the "
            "command with its jail, so nothing it does happens after its call")


def held_past_the_wall(agent: str) -> str:
    """What is recorded for a jailed shell call its CLI gave back to the model while the
    command ran (Codex past `yield_time_ms`), the command still running when the run's wall
    budget ran out: the model's request was held until then."""
    return (f"{agent} gave the call back while its command still ran, and the command was "
            "still running when the run's wall budget ran out: agentctl ended it with its jail")


@dataclass(frozen=True, slots=True)
class Launch:
    argv: Sequence[str]
    env: Mapping[str, str]
    # what else its sandbox shows it, read-only (a cache of its own it shares across attempts)
    read_only: tuple[Path, ...] = ()


def launch_agent(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, output: Path,
                 timeout: float, should_stop: Callable[[], bool],
                 jail: Jail | None = None) -> ProcessResult:
    """Start the agent CLI and wait for it: the one place that launches an agent CLI. In its
    jail, bubblewrap's pid namespace dies with agentctl, so a `kill -9` of agentctl leaves no
    orphan; unsandboxed, the guardian does that."""
    if jail is None:
        argv = [sys.executable, "-I", "-m", "agentctl.execution.agents.guardian", "--", *argv]
    return run_to_file(argv, cwd=cwd, env=env, output=output, timeout=timeout,
                       should_stop=should_stop, confine=jail)


def agent_jail(session: AgentSession, launch: Launch, home: Path,
               endpoints: Sequence[str]) -> Jail | None:
    """The CLI's sandbox: the workspace, its private home (HOME, and CODEX_HOME where it
    lives) read-write, the hook socket, its program, agentctl (for the hook and the MCP server)
    and the task file read-only, and only its model endpoints reachable."""

    sandbox, identity = session.sandbox, session.identity
    if sandbox is None or identity is None:
        return None
    program = program_dirs(str(launch.argv[0]), launch.env.get("PATH", ""))
    return sandbox.jail(
        session.workspace, allow=endpoints, home=home, forward=loopback_forwards(endpoints),
        read_only=(session.task_file, *program, Path(agentctl.__file__).parent,
                   *named_files(launch.argv[1:]), *launch.read_only),
        writable=(home, identity.private / wire.SOCKET_NAME))


def named_files(words: Sequence[str]) -> tuple[Path, ...]:
    """Files the operator's launch settings name by absolute path (`extra_args` such as
    `-c model_catalog_json="/path"`), to be visible read-only; never a dotfile."""
    out = []
    for word in words:
        text = word.rpartition("=")[2].strip("\"'")
        if not text.startswith("/") or "\n" in text:
            continue
        path = Path(text)
        if path.is_file() and not any(part.startswith(".") for part in path.parts[1:]):
            out.append(path)
    return tuple(dict.fromkeys(out))


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
        self._jails: ToolJails | None = None
        self.keys = Credentials()  # fresh per attempt (`run` makes them)
        # set when the CLI's session-start hook reached the attempt: agentctl's configuration
        # was loaded in that process
        self.guard_loaded = threading.Event()
        # each jailed shell call (by `call_key`) -> its stub, until its result is given back;
        # read on the gateway's thread too
        self._stubs: dict[str, str] = {}
        self._routing = threading.Lock()
        # calls whose commands were ended as their results went to the model (gateway thread),
        # with why, for the attempt's thread to record
        self._returned: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
        self._wall_left: Callable[[], float] = lambda: 0.0  # the session's, once it runs
        # what the model was told of a call given back while its command ran (by `call_key`),
        # the start of its output: the PostToolUse that follows says only what came after
        self._yielded: dict[str, str] = {}

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
        self._stubs, self._returned, self._yielded = {}, queue.SimpleQueue(), {}
        self._wall_left = session.wall_seconds
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
        attached.gateway.on_request = self._model_asked
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
        self._jails = ToolJails(session.sandbox, session.workspace, tool_env(session.env),
                                home / ".agentctl" / "calls") \
            if jail is not None and session.sandbox is not None else None
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
            if self._jails is not None:
                self._jails.close()
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
                if decision.allow and self._jails is not None and self._is_shell(payload, session):
                    tool_input = payload.get("tool_input")
                    routed = self._jails.replace(tool_input) if isinstance(tool_input, dict) \
                        else None
                    if routed is None:  # allowed, but it could only run unjailed: it does not
                        native.after(self.name, {**payload, "tool_response": {
                            "error": "not run: no command string to run in a tool jail"}},
                            failed=True)
                        return {"decision": wire.DENY, "reason": (
                            "agentctl runs shell commands in a jail of their own and could not "
                            "route this one (no `command` string): not run")}
                    with self._routing:
                        self._stubs[call_key(payload)] = str(routed["command"])
                    answer["updatedInput"] = json.dumps(routed, separators=(",", ":"))
                return answer
            if event == "PreSkillShellCommand":
                return self._skill_command(payload, native)
            if event == "SessionStart":
                self.guard_loaded.set()
                return {"ok": True}
            if event in ("PostToolUse", "PostToolUseFailure"):
                payload, failed = self._returned_now(payload,
                                                     failed=event == "PostToolUseFailure")
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

    def _returned_now(self, payload: dict[str, object], *,
                      failed: bool) -> tuple[dict[str, object], bool]:
        """A call's PostToolUse: a jailed command of it still running is ended with its jail
        (the CLI gave the call back too early), and the call is failed with the reason. For a
        call its CLI gave back earlier (held), its output begins with what the model was told."""
        with self._routing:
            stub = self._stubs.pop(call_key(payload), None)
            yielded = self._yielded.pop(call_key(payload), "")
        if stub is None or self._jails is None or not self._jails.end(stub):
            said = payload.get("tool_response")
            if yielded and isinstance(said, str):  # the output the model had before it
                return {**payload, "tool_response": yielded + said}, failed
            return payload, failed
        said = payload.get("tool_response")
        kept = said if isinstance(said, dict) else {"output": said} if isinstance(said, str) \
            else {}
        return {**payload, "tool_response": {**kept, "error": returned_running(self.name)}}, True

    def _model_asked(self, body: bytes) -> None:
        """A model request, on the gateway's thread before it goes on: the calls whose results
        it carries have returned, though a CLI may not say so (Codex fires no PostToolUse for
        an `exec_command` it yields while the command runs). A jailed command of one still
        running is waited for: the model cannot act meanwhile, so no other call interleaves.
        Past the run's wall budget the command is ended; the attempt's thread records why."""
        jails = self._jails
        if jails is None or not jails.busy:
            return
        for key, told in answered_calls(body).items():
            with self._routing:
                stub = self._stubs.get(key)
            if stub is None or not jails.running(stub):
                continue
            with self._routing:
                self._yielded[key] = self.output_told(told)
            if not jails.hold(stub, self._wall_left()):
                with self._routing:
                    self._stubs.pop(key, None)
                self._returned.put((key, held_past_the_wall(self.name)))

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
        if decision.allow and self._jails is not None:
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
        for done in self._jails.drain() if self._jails is not None else ():
            if self.waits_for_exit_codes:  # from agentctl's own run, not the CLI's stream
                native.command_finished(done.command, done.exit_code)
            native.network(done.jail, agent=self.name, command=done.command)
        while not self._returned.empty():  # ended as the model was given them
            key, why = self._returned.get()
            native.after(self.name, {"tool_use_id": key, "tool_response": {"error": why}},
                         failed=True)
        gateway = self._gateway
        for exchange in gateway.drain() if gateway is not None else ():
            native.exchange(exchange)  # the model's side, from where it crosses the boundary
        for payload, failed in state.results[answered:]:
            native.after(self.name, payload, failed=failed)
        if self._jails is None:  # unsandboxed: the CLI ran its commands itself
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


def tool_env(env: Mapping[str, str]) -> dict[str, str]:
    """What a jailed tool command gets: the attempt's environment without the model's base
    URLs and keys (the gateway is the CLI's alone)."""

    return {name: value for name, value in env.items()
            if name not in (*KEY_VARIABLES, *URL_VARIABLES, "CODEX_HOME")}


def frozen_spec(session: AgentSession) -> dict[str, Any]:
    """The frozen ExecutionSpec as the task file gives it to the agent."""
    try:
        spec = json.loads(session.task_file.read_text()).get("executionSpec", {})
    except (OSError, ValueError):
        return {}
    return spec if isinstance(spec, dict) else {}


def guard_hold(budget: Mapping[str, object]) -> float:
    """The run's `[gateway] guard_hold_seconds`, frozen into its budget (a run created before
    the key had none: the default)."""
    hold = budget.get("guardHoldSeconds")
    if isinstance(hold, (int, float)) and not isinstance(hold, bool) and hold > 0:
        return float(hold)
    return GUARD_HOLD_SECONDS


def prompt_for(session: AgentSession) -> str:
    """The task's instruction and the frozen spec's rules, as the agent is told them."""
    spec = frozen_spec(session)
    boundary = spec.get("patchBoundary", {})
    checks = [check.get("command") for check in spec.get("verificationPlan", {}).get("checks", [])]
    budget = spec.get("budget", {})
    lines = [session.instruction.strip(), "",
             "You work inside agentctl, which checks and records every tool call.",
             f"Workspace: {session.workspace}"]
    if boundary.get("allowedPaths"):
        lines.append(f"Allowed paths: {', '.join(boundary['allowedPaths'])}")
    if boundary.get("forbiddenPaths"):
        lines.append(f"Forbidden paths (never write them): {', '.join(boundary['forbiddenPaths'])}")
    if checks:
        lines.append(f"Verification commands agentctl runs afterwards: {'; '.join(map(str, checks))}")
    lines.append(f"Budget: {budget.get('maxToolCalls')} tool calls, "
                 f"{budget.get('wallSeconds')} s" + (
                     f", ${budget['maxCostUsd']}" if budget.get("maxCostUsd") else "") + (
                     f", {budget['maxTokens']} tokens" if budget.get("maxTokens") else ""))
    lines.append("A denied call says which rule denied it; do not try to work around it.")
    return "\n".join(lines)


def _result_json(result: object) -> dict[str, object]:

    value = to_json(result)
    return value if isinstance(value, dict) else {}


def collector_endpoints(env: Mapping[str, str]) -> tuple[str, ...]:
    """`host:port` of the OTLP collector the run's trace goes to (set only when it is traced):
    the agent sends its own spans there."""

    parts = urlsplit(env.get("OTEL_EXPORTER_OTLP_ENDPOINT", ""))
    if not parts.hostname:
        return ()
    return (f"{parts.hostname}:{parts.port or (80 if parts.scheme == 'http' else 443)}",)
