"""The gateway on its own against the fake Anthropic API (the vendor boundary): who may use it,
what it forwards, and that a spent budget refuses the next request before it leaves."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

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
    gateway = Gateway(upstream.url, KEY)
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
    gateway = Gateway(upstream.url, KEY, limits=Limits(max_tokens=50))
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

    gateway = Gateway(upstream.url, KEY)
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
