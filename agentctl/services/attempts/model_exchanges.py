"""A model request as the gateway saw it, on record: the one way both native and `command:`
agents' exchanges become MODEL_PLANNING steps (FAILED or TIMED_OUT for a vendor fault), and a
request the gateway refused a denied `model.request` call."""

from __future__ import annotations

import json

from agentctl.domain.enums import ArtifactType, ArtifactVisibility, StepStatus, StepType
from agentctl.domain.model_routes import MODEL_REQUEST
from agentctl.domain.redaction import Redactor
from agentctl.execution.gateway.server import Exchange
from agentctl.services.attempts.evidence import Redactions, json_artifact
from agentctl.services.ports import AttemptLedger, CallRequest, StepEnd

MAX_SUMMARY_CHARS = 1500


def record_exchange(ledger: AttemptLedger, redactor: Redactor | Redactions,
                    exchange: Exchange) -> dict[str, object] | None:
    """One model request as the gateway saw it: a MODEL_PLANNING step with its usage, cost
    and digests; the redacted request and response an INTERNAL_ONLY artifact. What the model
    said, for the transcript (None when it said nothing: refused, or a vendor fault). The
    attempt's `Redactions` spare redacting again what earlier requests repeated."""
    if exchange.refusal is not None:
        _refused(ledger, redactor, exchange)
        return None
    clean = redactor.clean(exchange.text).strip()
    if exchange.fault is not None:
        title = f"model request failed ({redactor.clean(exchange.fault)[:80]})"
    else:
        title = clean.splitlines()[0][:80] if clean else f"model request ({exchange.model})"
    step = ledger.begin_step(StepType.MODEL_PLANNING, title, live=False)
    record = json_artifact(ledger.blobs, {
        "method": exchange.method, "path": exchange.path, "status": exchange.status,
        "request": _document(exchange.request), "response": exchange.response.decode(
            "utf-8", "replace")}, name="model-exchange.json",
        type_=ArtifactType.MODEL_TRANSCRIPT_SUMMARY, redactor=redactor,
        visibility=ArtifactVisibility.INTERNAL_ONLY, compact=True)
    status, code = _ending(exchange)
    ledger.end_step(step, StepEnd(status=status, failure_code=code, artifacts=[record],
                                  attributes={
        "summary": clean[:MAX_SUMMARY_CHARS], "model": exchange.model,
        "inputTokens": exchange.input_tokens, "outputTokens": exchange.output_tokens,
        "costUsd": round(exchange.cost_usd, 6), "latencyMs": exchange.latency_ms,
        "stopReason": exchange.stop_reason, "requestDigest": exchange.request_digest,
        "responseDigest": exchange.response_digest, "httpStatus": exchange.status,
        **({"decision": "DENIED_BY_BUDGET", "matchedRule": f"budget: {exchange.budget_stop}"}
           if exchange.budget_stop else {}),
        **({"fault": redactor.clean(exchange.fault), "retryInSeconds": exchange.retry_in,
            "abandoned": exchange.abandoned} if exchange.fault is not None else {})}))
    if exchange.fault is not None:
        return None
    return {"model": exchange.model, "text": clean, "stopReason": exchange.stop_reason,
            "inputTokens": exchange.input_tokens, "outputTokens": exchange.output_tokens}


def model_unreachable(fault: str) -> str:
    """Why an attempt whose agent could not reach its model is an infrastructure failure."""
    return f"the agent's model could not be reached after agentctl's retries: {fault}"


def _ending(exchange: Exchange) -> tuple[StepStatus, str | None]:
    """A vendor fault's step: TIMED_OUT when no answer came in time, else FAILED."""
    if exchange.fault is None:
        return StepStatus.SUCCEEDED, None
    if exchange.status == 504:
        return StepStatus.TIMED_OUT, "model_timeout"
    return StepStatus.FAILED, f"model_http_{exchange.status}"


def _refused(ledger: AttemptLedger, redactor: Redactor | Redactions,
             exchange: Exchange) -> None:
    """A request the gateway answered itself: a denied `model.request` call, never forwarded."""
    refusal = exchange.refusal
    if refusal is None:
        return
    arguments = json.dumps({"method": exchange.method, "target": redactor.clean(exchange.path),
                            "answered": refusal.status}, sort_keys=True)
    ledger.finished_call(CallRequest(
        tool=MODEL_REQUEST, arguments_json=arguments, decision=refusal.decision,
        matched_rule=refusal.rule, denial_reason=redactor.clean(refusal.reason),
        requested_at=ledger.now()), None)


def _document(data: bytes) -> object:
    """A request body as JSON when it is JSON (so redaction goes value by value)."""
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace")
