"""The vendor's faults as the gateway rides them out: the real gateway server on loopback,
forwarding to the fake Anthropic API of `fake_models` (the vendor's API is the boundary
agentctl does not own, so it is the one fake here) scripted to answer 429, 529, 500, to drop
the connection or to hang. Every failed upstream request is an exchange on record."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator

import pytest

from agentctl.domain.agent import ModelApi
from agentctl.domain.model_faults import Retries
from agentctl.execution.gateway.server import Gateway
from tests.agents.fake_models import FakeModel, Fault, Script, Text, anthropic_server

KEY = "sk-ant-gateway-faults-81c2"
QUICK = Retries(tries=4, backoff_seconds=0.01, max_wait_seconds=5.0, timeout_seconds=30.0)


@pytest.fixture
def upstream() -> Iterator[FakeModel]:
    server = anthropic_server()
    yield server
    server.close()


def ask(gateway: Gateway) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=60)
    connection.request("POST", "/v1/messages?beta=true", body=json.dumps(
        {"model": "claude-sonnet-4-5", "stream": True, "messages": []}),
        headers={"x-api-key": gateway.placeholder, "content-type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def test_a_429_with_retry_after_is_waited_out_then_answered_the_failed_try_on_record(
        upstream: FakeModel) -> None:
    upstream.faults = [Fault(429, (("retry-after", "1"),))]
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, retries=QUICK)
    try:
        status, data = ask(gateway)
        assert status == 200 and b"message_stop" in data
        failed, answered = gateway.drain()
        assert (failed.status, failed.fault, failed.retry_in) == (
            429, "HTTP 429 Too Many Requests", 1.0)
        assert (answered.status, answered.fault, answered.output_tokens) == (200, None, 300)
        assert len(upstream.seen) == 2 and upstream.seen[1][2]["x-api-key"] == KEY
        assert upstream.seen_at[1] - upstream.seen_at[0] >= 1.0  # as the vendor asked
        assert gateway.requests == 2 and gateway.unreachable is None
    finally:
        gateway.close()


def test_a_retry_after_beyond_the_bound_passes_the_429_on_at_once(upstream: FakeModel) -> None:
    upstream.faults = [Fault(429, (("retry-after", "3600"),))]
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, retries=QUICK)
    try:
        status, data = ask(gateway)
        assert status == 429 and b"fake 429" in data
        [failed] = gateway.drain()
        assert failed.gave_up and len(upstream.seen) == 1
        assert gateway.unreachable == "HTTP 429 Too Many Requests"
    finally:
        gateway.close()


@pytest.mark.parametrize("status", [529, 500, 503])
def test_overloaded_and_server_errors_are_tried_again(upstream: FakeModel, status: int) -> None:
    upstream.faults = [Fault(status), Fault(status)]
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, retries=QUICK)
    try:
        assert ask(gateway)[0] == 200
        exchanges = gateway.drain()
        assert [e.status for e in exchanges] == [status, status, 200]
        assert [e.retry_in is not None for e in exchanges] == [True, True, False]
        assert all(e.fault and str(status) in e.fault for e in exchanges[:2])
        assert len(upstream.seen) == 3 and gateway.unreachable is None
    finally:
        gateway.close()


def test_a_dropped_connection_is_tried_again(upstream: FakeModel) -> None:
    upstream.faults = [Fault(drop=True)]
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, retries=QUICK)
    try:
        assert ask(gateway)[0] == 200
        dropped, answered = gateway.drain()
        assert dropped.status == 502 and dropped.fault is not None
        assert "connection failed" in dropped.fault and dropped.retry_in is not None
        assert answered.fault is None and len(upstream.seen) == 2
    finally:
        gateway.close()


def test_tries_are_bounded_and_the_last_failure_reaches_the_agent(upstream: FakeModel) -> None:
    upstream.always = Fault(500)
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, retries=QUICK)
    try:
        assert ask(gateway)[0] == 500
        exchanges = gateway.drain()
        assert len(exchanges) == len(upstream.seen) == QUICK.tries
        assert exchanges[-1].gave_up and not any(e.gave_up for e in exchanges[:-1])
        assert gateway.unreachable == "HTTP 500 Internal Server Error"
        assert gateway.requests == QUICK.tries
    finally:
        gateway.close()


def test_a_hung_upstream_is_given_up_on_at_its_timeout_and_on_record(
        upstream: FakeModel) -> None:
    upstream.faults = [Fault(hang=10.0)]
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC,
                      retries=Retries(timeout_seconds=0.5))
    try:
        status, data = ask(gateway)
        assert status == 504 and b"no answer within 0.5 s" in data
        [hung] = gateway.drain()
        assert (hung.status, hung.fault) == (504, "no answer within 0.5 s")
        assert hung.gave_up and hung.request_digest.startswith("sha256:")
        assert len(upstream.seen) == 1  # the prompt arrived: not sent a second time
        assert gateway.unreachable == hung.fault
    finally:
        gateway.close()


def test_a_request_hung_when_the_agents_turn_ends_is_on_record(upstream: FakeModel) -> None:
    """The gateway closing (the agent's turn is over) gives up on a request still waiting."""
    upstream.faults = [Fault(hang=10.0)]
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC)
    answers: list[int] = []
    asking = threading.Thread(target=lambda: answers.append(ask(gateway)[0]), daemon=True)
    asking.start()
    try:
        while not upstream.seen:
            time.sleep(0.02)
    finally:
        gateway.close()
    asking.join(30)
    [hung] = gateway.drain()
    assert hung.fault is not None and "turn ended" in hung.fault and hung.retry_in is None
    assert hung.abandoned and not hung.gave_up  # ours to end, not the vendor's fault alone
    assert gateway.unreachable is None
    assert answers == [502] and len(upstream.seen) == 1


def test_a_stream_that_breaks_off_is_passed_on_broken_and_its_spend_counted(
        upstream: FakeModel) -> None:
    """Once the answer's first byte went to the agent nothing is tried again: the agent sees
    the break, the record keeps what streamed."""
    upstream.script = Script([[Text("a" * 400)]], usage=(10, 100), chunk=40)
    server = upstream.server

    class Breaking(server.RequestHandlerClass):  # type: ignore[name-defined, misc]
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.wfile = _Cut(self.wfile, 600)
            super().do_POST()

    server.RequestHandlerClass = Breaking
    gateway = Gateway(upstream.url, KEY, api=ModelApi.ANTHROPIC, retries=QUICK)
    try:
        with pytest.raises(http.client.IncompleteRead):
            ask(gateway)
        [broken] = gateway.drain()
        assert broken.fault is not None and "broke off" in broken.fault
        assert broken.status == 200 and broken.input_tokens == 10 and broken.output_tokens > 0
        assert len(upstream.seen) == 1
    finally:
        gateway.close()


class _Cut:
    """A response stream that ends the connection after `limit` bytes."""

    def __init__(self, inner: object, limit: int) -> None:
        self.inner, self.limit, self.sent = inner, limit, 0

    def write(self, data: bytes) -> int:
        room = self.limit - self.sent
        if room <= 0:
            raise ConnectionResetError("cut")
        self.sent += min(room, len(data))
        written: int = self.inner.write(data[:room])  # type: ignore[attr-defined]
        if self.sent >= self.limit:
            self.inner.flush()  # type: ignore[attr-defined]
            raise ConnectionResetError("cut")
        return written

    def flush(self) -> None:
        self.inner.flush()  # type: ignore[attr-defined]
