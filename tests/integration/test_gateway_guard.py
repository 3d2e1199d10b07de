"""The gateway's enforcement canary on its own, against the fake Anthropic API: nothing is
forwarded before the agent's guard proved itself loaded (a session-start hook noted by the
attempt, or the per-attempt header a guard inside the CLI adds), the header never leaves, and
each refusal is on record with the canary's rule."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator

import pytest

from agentctl.domain.agent import Arming, ModelApi
from agentctl.domain.model_routes import GUARD_NOT_LOADED, GUARD_RULE
from agentctl.execution.gateway.guard import GUARD_HEADER, Guard
from agentctl.execution.gateway.server import Gateway
from tests.agents.fake_models import FakeModel, anthropic_server

KEY = "sk-ant-gateway-test-9a8b"
NONCE = "guard-nonce-of-this-attempt"


@pytest.fixture
def upstream() -> Iterator[FakeModel]:
    server = anthropic_server()
    yield server
    server.close()


def post(gateway: Gateway, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
    connection.request("POST", "/v1/messages?beta=true", body=json.dumps(
        {"model": "claude-sonnet-4-5", "stream": True, "messages": []}),
        headers={"x-api-key": gateway.placeholder, "content-type": "application/json",
                 **(headers or {})})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def guarded(upstream: FakeModel, arming: Arming, hold: float = 0.5) -> tuple[Gateway, Guard]:
    guard = Guard(arming, threading.Event(), NONCE, hold_seconds=hold)
    return Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, guard=guard), guard


def test_before_the_session_start_hook_a_request_is_held_then_refused_and_never_forwarded(
        upstream: FakeModel) -> None:
    gateway, guard = guarded(upstream, Arming.SESSION_START)
    try:
        status, data = post(gateway)
        assert status == 403 and GUARD_NOT_LOADED.encode() in data
        assert upstream.seen == []
        [exchange] = gateway.drain()
        assert exchange.refusal is not None and exchange.refusal.rule == GUARD_RULE
        assert guard.refused is not None and "session-start hook" in guard.refused
        assert post(gateway)[0] == 403  # at once now: the guard is known not to have loaded
        guard.loaded.set()  # a hook that came late (the attempt is being ended meanwhile)
        assert post(gateway)[0] == 200 and len(upstream.seen) == 1
    finally:
        gateway.close()


def test_a_request_racing_the_session_start_hook_waits_for_it_and_is_forwarded(
        upstream: FakeModel) -> None:
    gateway, guard = guarded(upstream, Arming.SESSION_START, hold=30)
    try:
        threading.Timer(0.2, guard.loaded.set).start()
        status, data = post(gateway)
        assert status == 200 and b"message_stop" in data
        assert len(upstream.seen) == 1 and guard.refused is None
    finally:
        gateway.close()


def test_a_header_armed_guard_needs_its_nonce_on_each_request_and_it_never_leaves(
        upstream: FakeModel) -> None:
    gateway, guard = guarded(upstream, Arming.HEADER)
    try:
        assert post(gateway, {GUARD_HEADER: NONCE})[0] == 200
        assert GUARD_HEADER not in {name.lower() for name in upstream.script.headers[0]}
        status, data = post(gateway)
        assert status == 403 and f"no {GUARD_HEADER} header".encode() in data
        status, data = post(gateway, {GUARD_HEADER: "another-attempts-nonce"})
        assert status == 403 and b"is not this attempt's" in data
        assert len(upstream.seen) == 1
        refused = [exchange for exchange in gateway.drain() if exchange.refusal is not None]
        assert [exchange.refusal.rule for exchange in refused
                if exchange.refusal is not None] == [GUARD_RULE, GUARD_RULE]
        assert guard.refused is not None
    finally:
        gateway.close()
