"""A model request as the gateway saw it, on record: the one way both native and `command:`
agents' exchanges become MODEL_PLANNING steps."""

from __future__ import annotations

import json

from agentctl.domain.enums import ArtifactType, ArtifactVisibility, StepType
from agentctl.domain.redaction import Redactor
from agentctl.execution.gateway.server import Exchange
from agentctl.services.attempts.evidence import json_artifact
from agentctl.services.ports import AttemptLedger, StepEnd

MAX_SUMMARY_CHARS = 1500


def record_exchange(ledger: AttemptLedger, redactor: Redactor,
                    exchange: Exchange) -> dict[str, object]:
    """One model request as the gateway saw it: a MODEL_PLANNING step with its usage, cost
    and digests; the redacted request and response an INTERNAL_ONLY artifact. What the model
    said, for the transcript."""
    clean = redactor.clean(exchange.text).strip()
    title = clean.splitlines()[0][:80] if clean else f"model request ({exchange.model})"
    step = ledger.begin_step(StepType.MODEL_PLANNING, title, live=False)
    record = json_artifact(ledger.blobs, {
        "method": exchange.method, "path": exchange.path, "status": exchange.status,
        "request": _document(exchange.request), "response": exchange.response.decode(
            "utf-8", "replace")}, name="model-exchange.json",
        type_=ArtifactType.MODEL_TRANSCRIPT_SUMMARY, redactor=redactor,
        visibility=ArtifactVisibility.INTERNAL_ONLY)
    ledger.end_step(step, StepEnd(artifacts=[record], attributes={
        "summary": clean[:MAX_SUMMARY_CHARS], "model": exchange.model,
        "inputTokens": exchange.input_tokens, "outputTokens": exchange.output_tokens,
        "costUsd": round(exchange.cost_usd, 6), "latencyMs": exchange.latency_ms,
        "stopReason": exchange.stop_reason, "requestDigest": exchange.request_digest,
        "responseDigest": exchange.response_digest, "httpStatus": exchange.status,
        **({"decision": "DENIED_BY_BUDGET", "matchedRule": f"budget: {exchange.budget_stop}"}
           if exchange.budget_stop else {})}))
    return {"model": exchange.model, "text": clean, "stopReason": exchange.stop_reason,
            "inputTokens": exchange.input_tokens, "outputTokens": exchange.output_tokens}


def _document(data: bytes) -> object:
    """A request body as JSON when it is JSON (so redaction goes value by value)."""
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace")
