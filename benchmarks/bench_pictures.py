"""The run page and the run's trace, each figure beside a baseline measured in the same run
(issue 29).

    .venv/bin/python benchmarks/bench_pictures.py [--steps 1000] [--calls 10000]

1. The HTML page of a STEPS-step run: seconds to gather and write it (target <= 0.5 s) beside
   the `run show --tree --json` document of the same run (the same reads, no rendering); its
   size (target <= 2 MB); and, with Chromium installed, seconds to render it headless beside a
   blank page (target <= 2 s).
2. Recording CALLS tool calls with a trace exporter configured vs the same with none (target
   <= 1.15x: the trace is built from the records once the run has ended, so recording does
   the same work either way); then the same plus that after-run export (planned from the
   records, every span sent over OTLP/HTTP to a sink on 127.0.0.1 in its own process).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from calls import record_fs_writes

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def line(name: str, value: float, baseline: float | None, unit: str, target: str) -> None:
    ratio = f"{value / baseline:6.2f}x" if baseline else "       "
    base = f"{baseline:9.3f} {unit}" if baseline is not None else " " * 11
    print(f"{name:<46} {value:9.3f} {unit}  baseline {base}  {ratio}  target {target}",
          flush=True)


def recorded(root: Path, calls: int):  # type: ignore[no-untyped-def]
    """A home with one run of `calls` recorded tool calls; (store, run id, seconds)."""
    from agentctl import config
    from agentctl.domain.agent import AgentKind, AgentSpec
    from agentctl.home import resolve_home
    from agentctl.services.actions.requests import TaskRequest
    from agentctl.services.actions.tasks import submit_task
    from agentctl.services.lifecycle.ledger import Ledger
    from agentctl.services.lifecycle.runs import create_run, lease_run
    from agentctl.store.storage import Store

    root.mkdir(parents=True)
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("bench\n")
    subprocess.run("git init -q -b main && git add -A && git commit -qm init", shell=True,
                   cwd=repo, check=True, env=ENV)
    store = Store(resolve_home(str(root / "home")))
    settings = config.defaults()
    task = submit_task(store, settings, TaskRequest(repository=str(repo), task_type="custom",
                                                    instruction="bench"), cwd=root)
    run = create_run(store, settings, task.task_id, agent=AgentSpec(AgentKind.NOOP))
    lease = lease_run(store, worker_id="bench", ttl_seconds=3600, run_id=run.run_id)
    assert lease is not None
    ledger = Ledger(store, lease, spec_digest=run.spec_digest)
    return store, run.run_id, record_fs_writes(ledger, calls, flush_every=50)


def page(root: Path, steps: int) -> None:
    from agentctl.cli.documents import run_document
    from agentctl.cli.render.html_page import run_page_html
    from agentctl.cli.run_page import gather
    from agentctl.store.views import Views

    store, run_id, _ = recorded(root / "page", steps)
    target = root / "page.html"
    writes, trees = [], []
    for _ in range(5):
        started = time.perf_counter()
        with Views(store.home) as views:
            text = run_page_html(gather(views, store.blobs, run_id, public=False))
        target.write_text(text, encoding="utf-8")
        writes.append(time.perf_counter() - started)
        started = time.perf_counter()
        with Views(store.home) as views:
            run_document(views, views.run(run_id), tree=True)
        trees.append(time.perf_counter() - started)
    line(f"page of a {steps}-step run, gathered and written", statistics.median(writes),
         statistics.median(trees), "s", "<= 0.5 s")
    line("page size", target.stat().st_size / 1e6, None, "MB", "<= 2 MB")
    chromium = shutil.which("chromium")
    if chromium is None:
        print("(chromium not installed: render time not measured)")
        return
    blank = root / "blank.html"
    blank.write_text("<!DOCTYPE html><p>blank</p>")
    line("page rendered in headless Chromium", _render(chromium, target, root),
         _render(chromium, blank, root), "s", "<= 2 s")


def _render(chromium: str, path: Path, root: Path) -> float:
    times = []
    for attempt in range(3):
        started = time.perf_counter()
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", f"--user-data-dir={root / f'profile-{path.stem}-{attempt}'}",
                        "--dump-dom", path.as_uri()], capture_output=True, check=True, timeout=120)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


# The collector stands in its own process, as a real one would: it reads each request and
# answers 200, so its decoding is not counted against agentctl.
SINK = """
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
server = HTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def trace(root: Path, calls: int) -> None:
    from agentctl.execution.otlp import export_trace
    from agentctl.services.queries.trace_export import plan_for
    from agentctl.store.views import Views

    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        endpoint = f"http://127.0.0.1:{sink.stdout.readline().strip()}"  # type: ignore[union-attr]
        plain, configured = [], []
        for round_ in range(3):  # interleaved: a shared machine drifts between runs
            plain.append(recorded(root / f"plain-{round_}", calls)[2])
            os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint  # as a traced run has it
            store, run_id, seconds = recorded(root / f"traced-{round_}", calls)
            os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT")
            configured.append(seconds)
        without, recording = statistics.median(plain), statistics.median(configured)
        started = time.perf_counter()
        with Views(store.home) as views:
            plan = plan_for(views, run_id)
        result = export_trace(plan, endpoint, max_spans=calls * 2, timeout=30)
        export = time.perf_counter() - started
    finally:
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
        sink.kill()
        sink.wait()
    assert result.dropped == 0 and result.exported == result.spans, result
    line(f"{calls} tool calls recorded, exporter configured", recording, without, "s",
         "<= 1.15x")
    line(f"  + the trace sent after the run ({result.spans} spans)", recording + export,
         without, "s", "(off the run's path)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=10_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="agentctl-bench-pictures-"))
    try:
        page(root, args.steps)
        trace(root, args.calls)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
