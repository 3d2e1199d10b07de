"""The worker's trace sender on its own: a real SQLite home holding one ended run (made once by
the installed CLI, copied for each test), and a collector on loopback that the test holds,
refuses or slows (the collector is the boundary agentctl does not own). A full queue drops and
counts, a failed export drops the next traces untried, and `close` waits for what is left."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import pytest

from agentctl.config import Config
from agentctl.domain.enums import EventType
from agentctl.domain.run import Run
from agentctl.home import Home, resolve_home
from agentctl.services.queries.trace_sender import CAPACITY, SendCounts, TraceSender
from agentctl.store.reads import StoreReads
from agentctl.store.storage import Store
from tests.conftest import make_repo

CONFIG = """\
[sandbox]
mode = "off"
[verification]
commands = ["true"]
baseline = "never"
reruns = 0
"""


@dataclass
class Collector:
    """Takes trace exports: each waits for `gate`, then `delay` seconds, then gets `status`."""

    status: int = 200
    delay: float = 0.0
    gate: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Event = field(default_factory=threading.Event)
    requests: int = 0
    endpoint: str = ""


@contextmanager
def collector(status: int = 200, delay: float = 0.0, *, held: bool = False
              ) -> Iterator[Collector]:
    taken = Collector(status, delay)
    if not held:
        taken.gate.set()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                taken.requests += 1
            taken.arrived.set()
            taken.gate.wait(30)
            time.sleep(taken.delay)
            self.send_response(taken.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    taken.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        yield taken
    finally:
        taken.gate.set()
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def ended_home(tmp_path_factory: pytest.TempPathFactory, run_agentctl: Any) -> Path:
    """A home with one ended run: queued, then cancelled (it never needs executing)."""
    root = tmp_path_factory.mktemp("sender")
    home, cwd = root / "home", root / "work"
    cwd.mkdir()
    (cwd / ".agentctl.toml").write_text(CONFIG)
    repo = make_repo(root / "repo", {"README.md": "hi\n"})
    task = run_agentctl("task", "submit", "--repo", str(repo), "--type", "refactor",
                        "--instruction", "fix", "--json", home=home, cwd=cwd).json()["taskId"]
    queued = run_agentctl("run", "start", task, "--agent", "noop", "--detach", "--json",
                          home=home, cwd=cwd).json()["runId"]
    cancelled = run_agentctl("run", "cancel", queued, home=home, cwd=cwd)
    assert cancelled.returncode == 0, cancelled.stderr
    return home


@dataclass
class Sending:
    home: Home
    run: Run
    said: list[str]
    sender: Callable[[str], TraceSender]

    def unsent(self) -> list[str | None]:
        """The error of each TraceExported event of the run, in order (None: sent)."""
        with StoreReads(self.home) as views:
            events = views.record(self.run.run_id).events
        return [cast("str | None", event.payload["error"]) for event in events
                if event.type is EventType.TRACE_EXPORTED]


@pytest.fixture
def sending(ended_home: Path, tmp_path: Path) -> Sending:
    home = tmp_path / "home"
    shutil.copytree(ended_home, home)
    state = resolve_home(str(home))
    store = Store(state)
    with StoreReads(state) as views:
        (run,) = views.runs(limit=1)
    said: list[str] = []
    return Sending(state, run, said,
                   lambda endpoint: TraceSender(store, Config(), endpoint, report=said.append))


def test_a_full_queue_drops_the_trace_and_counts_it(sending: Sending) -> None:
    extra = 3
    with collector(held=True) as taken:
        sender = sending.sender(taken.endpoint)
        sender.submit(sending.run)
        assert taken.arrived.wait(30)  # the first trace is on the wire: the queue is empty
        for _ in range(CAPACITY + extra):
            sender.submit(sending.run)
        taken.gate.set()
        counts = sender.close()

    assert counts == SendCounts(sent=1 + CAPACITY, dropped=extra)
    assert taken.requests == 1 + CAPACITY
    assert sending.unsent() == [None] * (1 + CAPACITY)  # a dropped hand-over leaves no record
    assert sending.said == []


def test_after_a_failed_export_the_next_traces_are_dropped_untried(sending: Sending) -> None:
    with collector(status=400) as refusing:
        sender = sending.sender(refusing.endpoint)
        for _ in range(4):
            sender.submit(sending.run)
        counts = sender.close()

    assert counts == SendCounts(sent=0, dropped=4)
    assert refusing.requests == 1  # the collector was asked once
    first, *rest = sending.unsent()
    assert first is not None and "did not take the spans" in first
    assert rest == ["not sent: the collector failed a moment ago"] * 3
    assert len(sending.said) == 1 and sending.said[0].startswith("WARNING: trace of")
    assert "dropped untried" in sending.said[0]


def test_close_waits_for_the_traces_still_being_sent(sending: Sending) -> None:
    with collector(delay=0.15) as slow:
        sender = sending.sender(slow.endpoint)
        for _ in range(3):
            sender.submit(sending.run)
        counts = sender.close()  # at once: all three still to go
        requests = slow.requests

    assert counts == SendCounts(sent=3, dropped=0)
    assert requests == 3
    assert sending.unsent() == [None] * 3
