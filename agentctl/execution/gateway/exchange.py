"""One model request as the gateway saw it, and the budgets it enforces: the values the
gateway's handler hands to the attempt (queued, recorded on the attempt's thread)."""

from __future__ import annotations

from dataclasses import dataclass

from agentctl.domain.model_routes import Refusal


@dataclass(frozen=True, slots=True)
class Limits:
    max_tokens: int | None = None
    max_cost_usd: float | None = None


NO_LIMITS = Limits()

@dataclass(frozen=True, slots=True)
class Exchange:
    """One model request as the gateway saw it: forwarded (and answered, or failed), or refused
    without leaving agentctl."""

    method: str
    path: str
    status: int  # the upstream's; 502/504 when it gave none (the connection failed, timed out)
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_ms: float
    stop_reason: str | None
    request_digest: str
    response_digest: str
    request: bytes
    response: bytes
    text: str  # the assistant's text in the response
    budget_stop: str | None  # the budget that ended this response (`max_tokens N`)
    fault: str | None = None  # the vendor's fault (a retried status, a timeout, a drop)
    retry_in: float | None = None  # seconds until the gateway tried again; None: it did not
    refusal: Refusal | None = None  # never forwarded: why
    abandoned: bool = False  # given up on when the agent's turn ended, not for the fault alone

    @property
    def gave_up(self) -> bool:
        """The agent was answered with this vendor fault: the gateway tried no more."""
        return self.fault is not None and self.retry_in is None and not self.abandoned

    @classmethod
    def refused(cls, method: str, path: str, refusal: Refusal) -> Exchange:
        return cls(method=method, path=path, status=refusal.status, model="", input_tokens=0,
                   output_tokens=0, cost_usd=0.0, latency_ms=0.0, stop_reason=None,
                   request_digest="", response_digest="", request=b"", response=b"", text="",
                   budget_stop=None, refusal=refusal)
