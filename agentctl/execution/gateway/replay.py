"""The gateway of a replay: it answers model requests from a recorded run's cassette instead
of the network (no upstream, no key).

The recorded response goes back through the same relay as a live one (server-sent events one
event at a time, metered, recorded as the replay's own exchanges). A request that matches no
recording is answered with an error naming the difference, never a made-up answer, and halts
the replay: any further request is refused. Other paths (the CLI's `HEAD /`) are refused by
the gateway's routes before they get here; token counts were never recorded and are refused
too (as an off-the-record request): their answers are not the model's.
"""

from __future__ import annotations

import http.client
import io
import json
import threading

from agentctl.domain.agent import ModelApi
from agentctl.domain.cassette import Cassette, Names
from agentctl.domain.model_faults import Retries
from agentctl.domain.model_prices import Price
from agentctl.execution.gateway.exchange import NO_LIMITS
from agentctl.execution.gateway.guard import Guard
from agentctl.execution.gateway.server import Gateway, Limits

REPLAY_UPSTREAM = "http://replay.invalid"


class _Bytes:
    """A socket whose reads come from a buffer, for http.client to parse a response from."""

    def __init__(self, data: bytes) -> None:
        self._file = io.BytesIO(data)

    def makefile(self, *_: object, **__: object) -> io.BytesIO:
        return self._file


def _response(status: int, body: bytes, content_type: str) -> http.client.HTTPResponse:
    head = (f"HTTP/1.1 {status} {http.client.responses.get(status, 'Status')}\r\n"
            f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    response = http.client.HTTPResponse(_Bytes(head + body))  # type: ignore[arg-type]
    response.begin()
    return response


class ReplayGateway(Gateway):
    """A gateway whose upstream is the cassette; `halted` says why the replay stopped."""

    def __init__(self, cassette: Cassette, names: Names, *, api: ModelApi,
                 limits: Limits = NO_LIMITS, prices: dict[str, Price] | None = None,
                 guard: Guard | None = None) -> None:
        self.cassette = cassette
        self.names = names  # how this attempt's requests name it
        self._answer_lock = threading.Lock()
        # a recorded answer is what it is: a vendor fault on record is replayed, not retried
        super().__init__(REPLAY_UPSTREAM, None, api=api, limits=limits, prices=prices,
                         retries=Retries(tries=1), guard=guard)

    def send(self, method: str, path: str, body: bytes, headers: dict[str, str],
             ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        connection = http.client.HTTPConnection("replay.invalid")  # never connected
        if self.halted:
            return connection, _error(409, f"agentctl replay: stopped ({self.halted})")
        if path.partition("?")[0].endswith("/count_tokens"):
            return connection, _error(404, f"agentctl replay: {method} {path} is not a model "
                                           "answer and was not recorded")
        try:
            request: object = json.loads(body)
        except ValueError:
            request = body.decode("utf-8", "replace")
        with self._answer_lock:
            recording, problem = self.cassette.answer(request, self.names, path)
            if recording is None:
                self.halted = problem
                return connection, _error(409, f"agentctl replay: {problem}")
        data = recording.response.encode("utf-8")
        streamed = data.lstrip().startswith((b"event:", b"data:"))
        return connection, _response(recording.status, data,
                                     "text/event-stream" if streamed else "application/json")

    def give_back(self, connection: http.client.HTTPConnection,
                  response: http.client.HTTPResponse, *, reusable: bool) -> None:
        response.close()


def _error(status: int, message: str) -> http.client.HTTPResponse:
    body = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                  "message": message, "code": "replay"}})
    return _response(status, body.encode(), "application/json")
