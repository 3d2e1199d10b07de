"""One OpenTelemetry trace per run, received by an OTLP/HTTP receiver in the test (the collector
is the boundary we do not own): span names, parent links, decisions and rules, the verdict, what
a cap or a collector that is down drops, and `run trace` after the fact.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.runs_support import CALC_FILES, Bench
from tests.otlp_receiver import ReceivedSpan, Receiver, otlp_receiver

CONFIG = """\
[sandbox]
mode = "off"
[verification]
commands = ["python3 -m unittest -v"]
baseline = "never"
reruns = 0
"""
EDIT = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
        "new": "def add(a, b):\n    \"\"\"The sum.\"\"\"\n"}
PUSH = {"tool": "shell.run", "command": "git push origin main"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("trace")
    bench = Bench(root, run_agentctl)
    bench.config(CONFIG)
    bench.repo = repo_maker(root / "calc", CALC_FILES)  # type: ignore[attr-defined]
    bench.agent = f"script:{bench.plan('plan.toml', EDIT, PUSH)}"  # type: ignore[attr-defined]
    yield bench


@pytest.fixture(scope="module")
def traced(bench: Any) -> Iterator[tuple[dict[str, Any], Receiver, Any]]:
    with otlp_receiver() as receiver:
        task = bench.submit(bench.repo)
        result = bench.cli("run", "start", task, "--agent", bench.agent, "--json",
                           expect=(0, 1), env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
        yield result.json(), receiver, result


def _by_id(spans: list[ReceivedSpan]) -> dict[str, ReceivedSpan]:
    return {s.span_id: s for s in spans}


def test_run_is_one_trace_with_root_attempt_phases_and_tools(traced) -> None:
    run, receiver, _ = traced
    spans = receiver.spans
    assert receiver.paths and all(p == "/v1/traces" for p in receiver.paths)
    assert len({s.trace_id for s in spans}) == 1
    roots = [s for s in spans if not s.parent_id]
    assert [r.name for r in roots] == ["agentctl.run"]
    assert roots[0].attributes["agentctl.run.id"] == run["runId"]
    assert roots[0].service == "agentctl"
    names = {s.name for s in spans}
    assert {"agentctl.attempt", "invoke_agent script", "execute_tool fs.replace",
            "execute_tool shell.run", "agentctl.phase workspace", "agentctl.phase verify",
            "agentctl.phase judge"} <= names
    by_id = _by_id(spans)
    assert all(s.parent_id in by_id for s in spans if s.parent_id)  # no dangling parent


def test_parent_links_nest_tools_under_the_agent_under_the_attempt(traced) -> None:
    _, receiver, _ = traced
    by_id = _by_id(receiver.spans)
    attempt = receiver.named("agentctl.attempt")[0]
    agent = receiver.named("invoke_agent")[0]
    assert by_id[attempt.parent_id].name == "agentctl.run"
    assert agent.parent_id == attempt.span_id
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    for tool in receiver.named("execute_tool"):
        assert tool.parent_id == agent.span_id
        assert tool.start_ns >= agent.start_ns and tool.end_ns <= agent.end_ns
        assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
        assert tool.attributes["gen_ai.tool.call.id"].startswith("toolcall_")


def test_denied_call_carries_decision_rule_and_spec_digest(traced, bench: Any) -> None:
    run, receiver, _ = traced
    push = receiver.named("execute_tool shell.run")[0]
    assert push.attributes["gen_ai.tool.name"] == "shell.run"
    assert push.attributes["agentctl.decision"] == "DENIED_BY_COMMAND_GUARD"
    assert push.attributes["agentctl.policy.rule"] == "deny: git push *"
    assert push.attributes["agentctl.spec.digest"] == run["specDigest"]
    assert push.status_code == 2  # ERROR: a denied call stands out in any trace view
    edit = receiver.named("execute_tool fs.replace")[0]
    assert edit.attributes["agentctl.decision"] == "ALLOWED"
    tree = bench.tree(run["runId"])
    calls = {s["toolCall"]["toolCallId"] for s in tree["attempts"][0]["steps"] if s["toolCall"]}
    assert {push.attributes["gen_ai.tool.call.id"],
            edit.attributes["gen_ai.tool.call.id"]} == calls


def test_verdict_is_on_the_root_as_attributes_and_an_event(traced) -> None:
    run, receiver, _ = traced
    root = receiver.named("agentctl.run")[0]
    verdict = run["verdict"]
    assert root.attributes["agentctl.verdict.status"] == verdict["status"]
    assert root.attributes["agentctl.verdict.pr_eligibility"] == verdict["prEligibility"]
    assert list(root.attributes["agentctl.verdict.reasons"]) == verdict["reasons"]
    assert [name for name, _ in root.events] == ["agentctl.verdict"]


def test_export_is_recorded_on_the_run_with_nothing_dropped(traced, bench: Any) -> None:
    run, receiver, result = traced
    exported = [e for e in bench.events(run["runId"]) if e["type"] == "TraceExported"]
    assert len(exported) == 1
    payload = exported[0]["payload"]
    assert payload["spans"] == payload["exported"] == len(receiver.spans)
    assert payload["dropped"] == 0 and payload["error"] is None
    assert payload["traceId"] == receiver.spans[0].trace_id
    assert "trace of" not in result.stderr
    bench.cli("audit", "verify")


def test_collector_down_is_one_warning_and_the_run_stands(bench: Any) -> None:
    task = bench.submit(bench.repo)
    result = bench.cli("run", "start", task, "--agent", bench.agent, "--json", expect=(0, 1),
                       env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    run = result.json()
    assert run["verdict"] is not None
    warnings = [line for line in result.stderr.splitlines() if "trace of" in line]
    assert len(warnings) == 1 and "WARNING" in warnings[0] and "dropped" in warnings[0]
    assert "Traceback" not in result.stderr
    payload = [e for e in bench.events(run["runId"])
               if e["type"] == "TraceExported"][0]["payload"]
    assert payload["exported"] == 0 and payload["dropped"] == payload["spans"] > 0


def test_span_cap_drops_and_counts_the_rest(bench: Any, tmp_path) -> None:
    capped = bench.config(CONFIG + "[telemetry]\nmax_spans = 3\n", name="capped.toml")
    with otlp_receiver() as receiver:
        task = bench.submit(bench.repo)
        run = bench.cli("--config", str(capped), "run", "start", task, "--agent", bench.agent,
                        "--json", expect=(0, 1),
                        env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}).json()
    assert [s.name for s in receiver.spans][:2] == ["agentctl.run", "agentctl.attempt"]
    assert len(receiver.spans) == 3
    payload = [e for e in bench.events(run["runId"])
               if e["type"] == "TraceExported"][0]["payload"]
    assert payload["exported"] == 3 and payload["dropped"] == payload["spans"] - 3 > 0


def test_run_trace_exports_a_finished_run_after_the_fact(traced, bench: Any) -> None:
    run, first, _ = traced
    with otlp_receiver() as receiver:
        result = bench.cli("run", "trace", run["runId"], "--endpoint", receiver.endpoint)
    assert "spans sent" in result.stderr
    assert sorted((s.span_id, s.parent_id, s.name) for s in receiver.spans) == \
        sorted((s.span_id, s.parent_id, s.name) for s in first.spans)


def test_run_trace_without_endpoint_or_with_collector_down(traced, bench: Any,
                                                           error_line) -> None:
    run, _, _ = traced
    missing = bench.cli("run", "trace", run["runId"], expect=(2,))
    assert "--endpoint" in error_line(missing.stderr)
    down = bench.cli("run", "trace", run["runId"], "--endpoint", "http://127.0.0.1:9",
                     expect=(1,))
    assert "not sent" in error_line(down.stderr)


@pytest.mark.parametrize("url", ["not a url", "localhost:4318", "ftp://collector", "http://",
                                 "http://collector:99999"])
def test_run_trace_refuses_what_is_not_a_url_and_records_nothing(
        traced, bench: Any, error_line, url: str) -> None:
    run, _, _ = traced
    before = bench.cli("events", "--run", run["runId"], "--json").json()
    refused = bench.cli("run", "trace", run["runId"], "--endpoint", url, expect=(2,))
    assert error_line(refused.stderr).startswith(
        f"agentctl: error: --endpoint {url!r} is not an OTLP/HTTP endpoint: ")
    assert bench.cli("events", "--run", run["runId"], "--json").json() == before


def test_a_bad_endpoint_in_the_environment_is_named_as_such(traced, bench: Any,
                                                             error_line) -> None:
    run, _, _ = traced
    refused = bench.cli("run", "trace", run["runId"], expect=(2,),
                        env={"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"})
    assert "OTEL_EXPORTER_OTLP_ENDPOINT 'collector:4318'" in error_line(refused.stderr)


def test_a_worker_traces_the_runs_it_finishes(bench: Any) -> None:
    with otlp_receiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        task = bench.submit(bench.repo)
        queued = bench.cli("run", "start", task, "--agent", bench.agent, "--detach", "--json",
                           env=env).json()
        assert receiver.spans == []  # queued: nothing ended, nothing sent
        bench.cli("worker", "--once", "--poll", "0.1", env=env)
    roots = receiver.named("agentctl.run")
    assert [r.attributes["agentctl.run.id"] for r in roots] == [queued["runId"]]
    assert receiver.named("execute_tool shell.run")[0].attributes["agentctl.decision"] == \
        "DENIED_BY_COMMAND_GUARD"
