"""The gateway's pure rules: which requests are a vendor's endpoints, and when a failed one is
tried again."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from agentctl.domain.agent import ModelApi
from agentctl.domain.enums import ToolDecision
from agentctl.domain.model_faults import Retries, wait_before_retry
from agentctl.domain.model_routes import Routes, budget_refusal

HOST = "127.0.0.1:4000"


def test_anthropic_endpoints_by_method_and_exact_path_with_a_plain_query() -> None:
    routes = Routes(ModelApi.ANTHROPIC, "", HOST)
    for target in ("/v1/messages", "/v1/messages?beta=true", "/v1/messages/count_tokens"):
        assert routes.refusal("POST", target, HOST) is None, target
    for method, target, status in [("POST", "/v1/messages/", 404), ("GET", "/v1/messages", 405),
                                   ("POST", "/v1/messages;x", 404), ("POST", "/v1/complete", 404),
                                   ("POST", "/V1/messages", 404), ("POST", "/v1%2Fmessages", 404),
                                   ("POST", "/v1/messages?a=b?c", 400),
                                   ("POST", "/v1/messages?x=<y>", 400),
                                   ("POST", "http://h/v1/messages", 400),
                                   ("POST", "*", 400)]:
        refusal = routes.refusal(method, target, HOST)
        assert refusal is not None and refusal.status == status, (method, target, refusal)
        assert refusal.decision is ToolDecision.DENIED_BY_POLICY
        assert refusal.rule == ("gateway: anthropic API (POST /v1/messages, "
                                "POST /v1/messages/count_tokens)")


def test_another_host_is_refused_and_a_prefix_is_part_of_the_exact_path() -> None:
    routes = Routes(ModelApi.OPENAI, "/proxy/v1", HOST)
    assert routes.refusal("POST", "/proxy/v1/responses", HOST) is None
    assert routes.refusal("POST", "/proxy/v1/chat/completions", HOST) is None
    assert routes.refusal("POST", "/v1/responses", HOST) is not None
    for host in ("localhost:4000", "127.0.0.1", "api.openai.com", None):
        refusal = routes.refusal("POST", "/proxy/v1/responses", host)
        assert refusal is not None and refusal.status == 421, host
    assert budget_refusal("max_tokens 5").decision is ToolDecision.DENIED_BY_BUDGET


def _headers(**given: str) -> dict[str, str]:
    return {name.replace("_", "-"): value for name, value in given.items()}


@pytest.mark.parametrize(("status", "headers", "tries", "wait"), [
    (429, _headers(retry_after="2"), 1, 2.0),
    (529, {}, 1, 0.5),
    (500, {}, 2, 1.0),
    (503, {}, 3, 2.0),
    (None, {}, 1, 0.5),  # a dropped connection
    (429, _headers(retry_after_ms="250", retry_after="9"), 1, 0.25),
    (429, _headers(retry_after="3600"), 1, None),  # longer than the bound: passed on
    (500, {}, 4, None),  # tries used up
    (400, {}, 1, None),  # the request's fault, not the vendor's
    (404, {}, 1, None),
    (429, _headers(retry_after="soon"), 2, 1.0),  # unreadable: the backoff
])
def test_when_a_failed_request_is_tried_again(status: int | None, headers: dict[str, str],
                                              tries: int, wait: float | None) -> None:
    policy = Retries(tries=4, backoff_seconds=0.5, max_wait_seconds=30.0)
    assert wait_before_retry(policy, tries, status, headers.get, 0.0) == wait


def test_a_retry_after_date_counts_from_now_and_the_backoff_is_bounded() -> None:
    now = 1_800_000_000.0
    assert wait_before_retry(Retries(), 1, 429, {"retry-after": formatdate(now + 10, usegmt=True)}
                             .get, now) == pytest.approx(10.0)
    assert wait_before_retry(Retries(tries=20, max_wait_seconds=3.0), 10, 500, {}.get, 0) == 3.0


def test_gemini_endpoints_name_a_model_of_a_safe_charset_in_their_path() -> None:
    routes = Routes(ModelApi.GEMINI, "", HOST)
    for target in ("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
                   "/v1beta/models/gemini-2.5-flash-lite:generateContent",
                   "/v1beta/models/gemini_3.0:generateContent"):
        assert routes.refusal("POST", target, HOST) is None, target
    for method, target, status in [
            ("GET", "/v1beta/models/gemini-2.5-pro:generateContent", 405),
            ("POST", "/v1beta/models/gemini-2.5-pro:countTokens", 404),
            ("POST", "/v1beta/models/../files:generateContent", 404),
            ("POST", "/v1beta/models/a/b:generateContent", 404),
            ("POST", "/v1beta/models/%2e%2e:generateContent", 404),
            ("POST", "/v1beta/models/:generateContent", 404),
            ("POST", "/v1beta/models/x:generateContent:streamGenerateContent", 404),
            ("POST", "/v1beta/models/" + "m" * 129 + ":generateContent", 404),
            ("POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse#x", 400),
            ("POST", "/v1/models/gemini-2.5-pro:generateContent", 404),
            ("POST", "/v1beta/files", 404)]:
        refusal = routes.refusal(method, target, HOST)
        assert refusal is not None and refusal.status == status, (method, target, refusal)
        assert refusal.rule == ("gateway: gemini API (POST /v1beta/models/{model}:"
                                "streamGenerateContent, POST /v1beta/models/{model}:"
                                "generateContent)")
