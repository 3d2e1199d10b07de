"""The gateway on its own against the fake Anthropic API (the vendor boundary, the one fake
here: the gateway is the real server on loopback): who may use it, what it forwards (each
vendor's endpoints by method and exact path, nothing else), and that a spent budget refuses
every further request before it leaves."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.domain.agent import ModelApi
from agentctl.domain.enums import ToolDecision
from agentctl.execution.gateway.server import Gateway, Limits
from tests.agents.fake_models import FakeModel, Script, Text, anthropic_server

KEY = "sk-ant-gateway-test-5e6f"


@pytest.fixture
def upstream() -> Iterator[FakeModel]:
    server = anthropic_server()
    yield server
    server.close()


def post(gateway: Gateway, key: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
    connection.request("POST", "/v1/messages?beta=true", body=json.dumps(
        {"model": "claude-sonnet-4-5", "stream": True, "messages": []}),
        headers={"x-api-key": key, "content-type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def test_a_request_without_the_attempts_placeholder_is_refused_and_never_forwarded(
        upstream: FakeModel) -> None:
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC)
    try:
        assert post(gateway, KEY)[0] == 401  # not even the real key opens it
        assert post(gateway, "agentctl-gateway-guess")[0] == 401
        assert upstream.script.requests == []
        status, data = post(gateway, gateway.placeholder)
        assert status == 200 and b"message_stop" in data
        assert upstream.script.headers[0]["x-api-key"] == KEY
        [exchange] = gateway.drain()
        assert (exchange.input_tokens, exchange.output_tokens) == (1200, 300)
    finally:
        gateway.close()


def test_once_the_budget_is_spent_the_next_request_is_refused_before_it_leaves(
        upstream: FakeModel) -> None:
    upstream.script = Script([[Text("a" * 400)]], usage=(10, 100), chunk=40)
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, limits=Limits(max_tokens=50))
    try:
        status, data = post(gateway, gateway.placeholder)
        assert status == 200 and b"the budget is spent (max_tokens 50" in data
        assert b"message_stop" not in data  # ended mid-answer
        [exchange] = gateway.drain()
        assert exchange.budget_stop == "max_tokens 50"
        assert 50 <= exchange.input_tokens + exchange.output_tokens <= 60
        status, data = post(gateway, gateway.placeholder)
        assert status == 400 and b"max_tokens 50" in data
        assert len(upstream.script.requests) == 1
    finally:
        gateway.close()


def test_the_cost_report_uses_the_gateways_figures_and_a_disagreeing_claim_is_a_warning(
        upstream: FakeModel) -> None:
    from agentctl.execution.gateway.attach import claim_warnings, gateway_report

    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC)
    try:
        assert post(gateway, gateway.placeholder)[0] == 200
        claimed = {"agent": "claude", "costUsd": 9.0, "inputTokens": 1200, "outputTokens": 300}
        report = gateway_report(claimed, gateway)
        assert report["claimsAgree"] is True and claim_warnings("claude", report) == ()
        assert report["totalTokens"] == 1500 and report["costUsd"] == round(
            (1200 * 3 + 300 * 15) / 1e6, 6)  # claude-sonnet-4 list price, not the claim
        lied = gateway_report({**claimed, "outputTokens": 3}, gateway)
        assert lied["claimsAgree"] is False
        [warning] = claim_warnings("claude", lied)
        assert "claimed 1200 input and 3 output" in warning and "measured 1200 and 300" in warning
    finally:
        gateway.close()


@pytest.mark.parametrize(("source", "variable", "header"), [
    ({"ANTHROPIC_API_KEY": KEY}, "ANTHROPIC_API_KEY", "x-api-key"),
    ({"ANTHROPIC_AUTH_TOKEN": KEY}, "ANTHROPIC_AUTH_TOKEN", "authorization"),
])
def test_the_cli_gets_the_gateway_and_a_placeholder_never_the_key(
        upstream: FakeModel, tmp_path: Path, source: dict[str, str], variable: str,
        header: str) -> None:
    from agentctl.domain.agent import NativeAgentSettings
    from agentctl.execution.gateway.attach import attach

    passed = {"PATH": "/usr/bin", "ANTHROPIC_BASE_URL": upstream.url, "COPY": KEY, **source}
    attached = attach("claude", passed, NativeAgentSettings(command="claude"), {},
                      source={**source, "ANTHROPIC_BASE_URL": upstream.url})
    try:
        env = attached.env
        assert KEY not in env.values() and "COPY" not in env  # whatever its name
        assert env[variable] == attached.gateway.placeholder
        assert env["ANTHROPIC_BASE_URL"] == attached.gateway.base_url != upstream.url
        connection = http.client.HTTPConnection("127.0.0.1", attached.gateway.port, timeout=30)
        credential = env[variable] if header == "x-api-key" else f"Bearer {env[variable]}"
        connection.request("POST", "/v1/messages", body=b"{}", headers={header: credential})
        assert connection.getresponse().status == 200
        sent = upstream.script.headers[-1][header]
        assert sent == (KEY if header == "x-api-key" else f"Bearer {KEY}")
    finally:
        attached.gateway.close()


def send(gateway: Gateway, method: str, target: str, *, host: str | None = None) -> int:
    """One request as a client inside the sandbox could send it (target and Host verbatim)."""
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
    headers = {"x-api-key": gateway.placeholder, "content-type": "application/json"}
    if host is not None:
        headers["Host"] = host
    connection.request(method, target, body=json.dumps(
        {"model": "claude-sonnet-4-5", "stream": True, "messages": []}), headers=headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status


REFUSED = [
    ("POST", "/v1/messages/", None),
    ("POST", "/v1/messages/batches", None),
    ("POST", "/v1/messages;x", None),
    ("POST", "/v1/messages#frag", None),
    ("POST", "/v1%2Fmessages", None),
    ("POST", "/v1/messages%2F", None),
    ("POST", "/v1/complete", None),
    ("POST", "/v1//messages", None),
    ("POST", "/v1/./messages", None),
    ("POST", "/v1/messages?beta=true#x", None),
    ("GET", "/v1/models", None),
    ("GET", "/v1/messages", None),
    ("HEAD", "/", None),
    ("PUT", "/v1/messages", None),
    ("DELETE", "/v1/messages", None),
    ("POST", "http://127.0.0.1:1/v1/messages", None),
    ("POST", "//127.0.0.1:1/v1/messages", None),
    ("POST", "/v1/messages", "api.anthropic.com"),
    ("POST", "/v1/messages", "127.0.0.1"),
]


@pytest.mark.parametrize(("method", "target", "host"), REFUSED)
def test_a_request_off_the_vendors_api_is_refused_never_forwarded_and_on_record_as_denied(
        upstream: FakeModel, method: str, target: str, host: str | None) -> None:
    """The fake upstream counts every request it receives, whatever its path: a refused one
    never reaches it, so neither does the real key."""
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC)
    try:
        status = send(gateway, method, target, host=host)
        assert 400 <= status < 500, status
        assert upstream.seen == []  # not forwarded, so the real key went nowhere
        [refused] = gateway.drain()
        assert refused.refusal is not None and refused.status == status
        assert refused.refusal.decision is ToolDecision.DENIED_BY_POLICY
        assert refused.method == method  # http.server itself folds a leading `//` into `/`
        assert refused.path.lstrip("/") == target.lstrip("/")
        assert gateway.requests == 0 and gateway.tokens == 0
        assert send(gateway, "POST", "/v1/messages?beta=true") == 200  # the API itself is open
        assert [(m, t) for m, t, _ in upstream.seen] == [("POST", "/v1/messages?beta=true")]
        assert upstream.seen[0][2]["x-api-key"] == KEY
    finally:
        gateway.close()


def test_the_vendors_endpoints_are_exact_under_the_upstreams_own_path(
        upstream: FakeModel) -> None:
    """OpenAI's base URL holds `/v1`: `/v1/responses` and `/v1/chat/completions` pass,
    Anthropic's paths and OpenAI's without the prefix do not."""
    gateway = Gateway(upstream.url + "/v1", KEY, api=ModelApi.OPENAI)
    try:
        assert send(gateway, "POST", "/v1/messages") == 404
        assert send(gateway, "POST", "/responses") == 404
        assert send(gateway, "GET", "/v1/responses") == 405
        assert [e.status for e in gateway.drain()] == [404, 404, 405]
        assert upstream.seen == []
        assert send(gateway, "POST", "/v1/chat/completions") == 200
        assert [t for _, t, _ in upstream.seen] == ["/v1/chat/completions"]
    finally:
        gateway.close()


def test_once_the_budget_is_spent_every_request_is_refused_model_listing_and_counting_too(
        upstream: FakeModel) -> None:
    upstream.script = Script([[Text("a" * 400)]], usage=(10, 100), chunk=40)
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, limits=Limits(max_tokens=50))
    try:
        assert post(gateway, gateway.placeholder)[0] == 200
        assert len(upstream.seen) == 1 and gateway.spent == "max_tokens 50"
        gateway.drain()
        assert send(gateway, "GET", "/v1/models") == 404
        assert send(gateway, "POST", "/v1/messages/count_tokens") == 400
        assert send(gateway, "POST", "/v1/messages") == 400
        assert len(upstream.seen) == 1  # none of them reached the model
        refused = gateway.drain()
        assert [r.refusal.decision if r.refusal else None for r in refused] == [
            ToolDecision.DENIED_BY_POLICY, ToolDecision.DENIED_BY_BUDGET,
            ToolDecision.DENIED_BY_BUDGET]
        assert refused[1].refusal is not None
        assert refused[1].refusal.rule == "budget: max_tokens 50"
    finally:
        gateway.close()


def test_token_counting_is_forwarded_and_on_record_while_the_budget_lasts(
        upstream: FakeModel) -> None:
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, limits=Limits(max_tokens=50))
    try:
        assert send(gateway, "POST", "/v1/messages/count_tokens?beta=true") == 200
        assert [t for _, t, _ in upstream.seen] == ["/v1/messages/count_tokens?beta=true"]
        [counted] = gateway.drain()
        assert counted.refusal is None and counted.status == 200 and counted.fault is None
    finally:
        gateway.close()
