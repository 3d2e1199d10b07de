"""The enforcement canary: the gateway forwards none of the run's model traffic until agentctl's
guard has proved itself loaded in the agent CLI's own process.

A hook that silently did not load (a setting that disables hooks, a plugin that failed to
load) would leave every tool call unguarded and unrecorded; without its model the CLI makes
no tool call, so the gateway is where that is stopped. The proof is the CLI's session-start
hook reaching the attempt (`Arming.SESSION_START`: a request waits a moment for it, since the
hook may race the first request), or, for a guard inside the CLI, a per-attempt nonce on each
request (`Arming.HEADER`, never forwarded).
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field

from agentctl.domain.agent import GUARD_HOLD_SECONDS, Arming
from agentctl.domain.model_routes import Refusal, guard_refusal

GUARD_HEADER = "x-agentctl-guard"


@dataclass(slots=True)
class Guard:
    """What the gateway checks before forwarding a request; `refused` once it refused one."""

    arming: Arming
    loaded: threading.Event  # set by the attempt when the session-start hook reached it
    nonce: str  # what each request carries under `Arming.HEADER`
    hold_seconds: float = GUARD_HOLD_SECONDS  # `[gateway] guard_hold_seconds`
    refused: str | None = field(default=None)

    def refusal(self, header: str | None, closing: threading.Event) -> Refusal | None:
        """None when the request may go on; else why not (and the guard is noted as failed,
        so a later request is refused at once)."""
        if self.arming is Arming.HEADER:
            if header is not None and secrets.compare_digest(header.encode(),
                                                              self.nonce.encode()):
                return None
            why = (f"the request carries no {GUARD_HEADER} header: agentctl's guard inside "
                   "the agent did not add it" if header is None else
                   f"the request's {GUARD_HEADER} header is not this attempt's")
        else:
            if self.loaded.is_set() or (self.refused is None and self._loaded_within(closing)):
                return None
            why = ("no session-start hook of agentctl's reached the attempt before this model "
                   "request: the agent's hooks are not running")
        self.refused = self.refused or why
        return guard_refusal(why)

    def _loaded_within(self, closing: threading.Event) -> bool:
        deadline = time.monotonic() + self.hold_seconds
        while not self.loaded.wait(0.05):
            if closing.is_set() or time.monotonic() >= deadline:
                return False
        return True
