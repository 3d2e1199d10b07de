"""The jailed shell calls of one attempt's agent CLI, from the call to its end.

In a sandboxed run every shell command the CLI is allowed runs in a tool jail of its own: its
PreToolUse input is replaced by a stub that runs the command there. A call whose PostToolUse
comes while its command still runs has that command ended with its jail and is recorded failed
with why. A CLI that gives a call back to its model with no PostToolUse (Codex's
`exec_command` past `yield_time_ms`) is held instead: the model request carrying the call's
result waits at the gateway until the command ends, so no other call runs meanwhile and the
command's writes are its call's.

The hook socket's thread and the gateway's both touch a call's routing, hence the lock.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator

from agentctl.domain.native_call_ids import answered_calls, call_key
from agentctl.execution.agents.tool_jail import Ran, ToolJails


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


class ShellRouting:
    """Which stub each jailed call runs (by `call_key`), until its result is given back."""

    def __init__(self, agent: str, jails: ToolJails, *, wall_left: Callable[[], float],
                 output_told: Callable[[str], str]) -> None:
        self._agent, self._jails = agent, jails
        self._wall_left = wall_left  # the session's budget left, when a request is held
        self._output_told = output_told  # a command's output as the CLI told its model
        self._stubs: dict[str, str] = {}
        self._lock = threading.Lock()
        # calls whose commands were ended as their results went to the model (gateway
        # thread), with why, for the attempt's thread to record
        self._ended: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
        # what the model was told of a call given back while its command ran, the start of
        # its output: the PostToolUse that follows says only what came after
        self._yielded: dict[str, str] = {}

    def route(self, payload: dict[str, object]) -> dict[str, object] | None:
        """The allowed call's input with its command replaced by its jail's stub; None when
        it has no command string to run there (it is then not run at all)."""
        tool_input = payload.get("tool_input")
        routed = self._jails.replace(tool_input) if isinstance(tool_input, dict) else None
        if routed is not None:
            with self._lock:
                self._stubs[call_key(payload)] = str(routed["command"])
        return routed

    def returned(self, payload: dict[str, object], *,
                 failed: bool) -> tuple[dict[str, object], bool]:
        """A call's PostToolUse: a jailed command of it still running is ended with its jail
        (the CLI gave the call back too early), and the call is failed with the reason. For a
        call its CLI gave back earlier (held), its output begins with what the model was
        told."""
        with self._lock:
            stub = self._stubs.pop(call_key(payload), None)
            yielded = self._yielded.pop(call_key(payload), "")
        said = payload.get("tool_response")
        if stub is None or not self._jails.end(stub):
            if yielded and isinstance(said, str):  # the output the model had before it
                return {**payload, "tool_response": yielded + said}, failed
            return payload, failed
        kept = said if isinstance(said, dict) else {"output": said} if isinstance(said, str) \
            else {}
        return {**payload, "tool_response": {**kept, "error": returned_running(self._agent)}}, True

    def model_asked(self, body: bytes) -> None:
        """A model request, on the gateway's thread before it goes on: the calls whose results
        it carries have returned, though a CLI may not say so. A jailed command of one still
        running is waited for: the model cannot act meanwhile. Past the run's wall budget the
        command is ended; the attempt's thread records why (`ended_as_given`)."""
        if not self._jails.busy:
            return
        for key, told in answered_calls(body).items():
            with self._lock:
                stub = self._stubs.get(key)
            if stub is None or not self._jails.running(stub):
                continue
            with self._lock:
                self._yielded[key] = self._output_told(told)
            if not self._jails.hold(stub, self._wall_left()):
                with self._lock:
                    self._stubs.pop(key, None)
                self._ended.put((key, held_past_the_wall(self._agent)))

    def ended_as_given(self) -> Iterator[tuple[str, str]]:
        """(call key, why) of each call whose command was ended as the model was given it."""
        while not self._ended.empty():
            yield self._ended.get()

    def finished(self) -> list[Ran]:
        """The jailed commands that ended since the last look."""
        return self._jails.drain()

    def close(self) -> None:
        self._jails.close()
