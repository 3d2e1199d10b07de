"""The gateway speaking Gemini's API on its own, against the fake Gemini API (the vendor
boundary; the gateway is the real server on loopback): the placeholder in `x-goog-api-key`
is swapped for the real key, the model a path names is checked, and usageMetadata is metered
as the answer streams, a budget ending it mid-answer."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest

from agentctl.domain.agent import ModelApi
from agentctl.execution.gateway.attach import attach
from agentctl.execution.gateway.server import Gateway, Limits
from tests.agents.fake_gemini import gemini_server
from tests.agents.fake_models import FakeModel, Script, Text

KEY = "AIza-gateway-test-9c1e"
STREAM = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


@pytest.fixture
def upstream() -> Iterator[FakeModel]:
    server = gemini_server()
    yield server
    server.close()


def post(gateway: Gateway, key: str, target: str = STREAM) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
    connection.request("POST", target, body=json.dumps(BODY),
                       headers={"x-goog-api-key": key, "content-type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def test_the_placeholder_opens_it_and_the_vendor_gets_the_real_key(upstream: FakeModel) -> None:
    gateway = Gateway(upstream.url, KEY, api=ModelApi.GEMINI)
    try:
        assert post(gateway, KEY)[0] == 401  # not even the real key opens it
        assert upstream.script.requests == []
        status, data = post(gateway, gateway.placeholder)
        assert status == 200 and b'"finishReason": "STOP"' in data
        assert upstream.script.headers[0]["x-goog-api-key"] == KEY
        assert upstream.script.paths == [STREAM]
        status, data = post(gateway, gateway.placeholder,
                            "/v1beta/models/gemini-2.5-pro:generateContent")
        assert status == 200 and json.loads(data)["usageMetadata"]["promptTokenCount"] == 1200
        streamed, whole = gateway.drain()
        assert (streamed.model, streamed.input_tokens, streamed.output_tokens,
                streamed.stop_reason) == ("gemini-2.5-pro", 1200, 300, "STOP")
        assert (whole.input_tokens, whole.output_tokens) == (1200, 300)
    finally:
        gateway.close()


@pytest.mark.parametrize("target", ["/v1beta/models/../files:generateContent",
                                    "/v1beta/models/gemini-2.5-pro:countTokens",
                                    "/v1beta/files"])
def test_a_path_off_its_routes_is_refused_and_never_forwarded(upstream: FakeModel,
                                                              target: str) -> None:
    gateway = Gateway(upstream.url, KEY, api=ModelApi.GEMINI)
    try:
        status, data = post(gateway, gateway.placeholder, target)
        assert status == 404 and b"not an endpoint of the gemini API" in data
        assert upstream.seen == []
    finally:
        gateway.close()


def test_a_spent_budget_ends_the_answer_mid_stream(upstream: FakeModel) -> None:
    upstream.script = Script([[Text("a" * 400)]], usage=(10, 100), chunk=40)
    gateway = Gateway(upstream.url, KEY, api=ModelApi.GEMINI, limits=Limits(max_tokens=50))
    try:
        status, data = post(gateway, gateway.placeholder)
        assert status == 200 and b"the budget is spent (max_tokens 50" in data
        assert b"finishReason" not in data  # ended before the last chunk
        [exchange] = gateway.drain()
        assert exchange.budget_stop == "max_tokens 50"
        assert post(gateway, gateway.placeholder)[0] == 400
        assert len(upstream.script.requests) == 1
    finally:
        gateway.close()


def test_the_cli_gets_the_gateway_and_a_placeholder_never_a_google_key() -> None:
    from agentctl.domain.agent import NativeAgentSettings

    attached = attach("gemini", {"PATH": "/bin", "GOOGLE_API_KEY": KEY, "OTHER": KEY[::-1]},
                      NativeAgentSettings(command="gemini"), {},
                      source={"GOOGLE_API_KEY": KEY,
                              "GOOGLE_GEMINI_BASE_URL": "https://gemini.example"})
    try:
        env = attached.env
        assert env["GEMINI_API_KEY"] == attached.gateway.placeholder
        assert env["GOOGLE_GEMINI_BASE_URL"] == attached.gateway.base_url
        assert "GOOGLE_API_KEY" not in env and "OTHER" not in env  # nor the key reversed
        assert attached.gateway.key == KEY
        assert attached.gateway.upstream.netloc == "gemini.example"
    finally:
        attached.gateway.close()
