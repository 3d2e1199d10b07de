"""A worker whose trace collector is down (a closed port) or hangs (a socket that takes the
connection and never answers): its runs complete, and each trace not sent is counted as
dropped, on the run's record and in the worker's last words. A real `agentctl worker`."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_repo
from tests.e2e.runs_support import Bench
from tests.otlp_receiver import otlp_receiver

RUNS = 3
CONFIG = """\
[sandbox]
mode = "off"
[verification]
commands = ["true"]
baseline = "never"
reruns = 0
"""
COUNTS = re.compile(r"traces: (\d+) sent, (\d+) dropped")


@contextmanager
def closed_port() -> Iterator[str]:
    """An endpoint nobody listens on (bound, so no one else takes the port meanwhile)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


@contextmanager
def hanging_collector() -> Iterator[str]:
    """A listening socket never accepted from: the kernel takes each connection, and the
    request sent on it is never answered."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


@contextmanager
def working_collector() -> Iterator[str]:
    with otlp_receiver() as receiver:
        yield receiver.endpoint


def _worker_with(bench: Bench, endpoint: str, tmp_path: Path) -> tuple[list[str], Any]:
    bench.config(CONFIG)
    repo = make_repo(tmp_path / "repo", {"README.md": "hi\n"})
    plan = bench.plan("write.toml", {"tool": "fs.write", "path": "NOTES.md", "content": "x\n"})
    task = bench.submit(repo)
    runs = [bench.cli("run", "start", task, "--agent", f"script:{plan}", "--detach",
                      "--json").json()["runId"] for _ in range(RUNS)]
    worker = bench.cli("worker", "--once", "--poll", "0.1",
                       env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}, timeout=300)
    return runs, worker


@pytest.mark.parametrize("collector", [closed_port, hanging_collector])
def test_a_worker_completes_its_runs_and_counts_the_traces_a_failed_collector_drops(
        tmp_path: Path, run_agentctl: Any, collector: Any) -> None:
    bench = Bench(tmp_path, run_agentctl)
    with collector() as endpoint:
        runs, worker = _worker_with(bench, endpoint, tmp_path)

    assert "Traceback" not in worker.stderr
    assert [bench.tree(run)["status"] for run in runs] == ["COMPLETED"] * RUNS
    counts = COUNTS.search(worker.stderr)
    assert counts is not None, worker.stderr
    assert (int(counts[1]), int(counts[2])) == (0, RUNS)
    assert sum("WARNING" in line and "trace of" in line
               for line in worker.stderr.splitlines()) <= 1
    for run in runs:  # a trace recorded as dropped was dropped whole
        for event in bench.events(run):
            if event["type"] == "TraceExported":
                assert event["payload"]["exported"] == 0
                assert event["payload"]["dropped"] == event["payload"]["spans"] > 0


def test_a_worker_with_a_working_collector_counts_every_trace_sent(
        tmp_path: Path, run_agentctl: Any) -> None:
    bench = Bench(tmp_path, run_agentctl)
    with working_collector() as endpoint:
        runs, worker = _worker_with(bench, endpoint, tmp_path)

    counts = COUNTS.search(worker.stderr)
    assert counts is not None, worker.stderr
    assert (int(counts[1]), int(counts[2])) == (RUNS, 0)
    for run in runs:
        (exported,) = [e for e in bench.events(run) if e["type"] == "TraceExported"]
        assert exported["payload"]["exported"] == exported["payload"]["spans"] > 0
