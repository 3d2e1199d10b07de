"""`agentctl run replay` with the real Claude Code CLI: a run recorded through the gateway
against the scripted fake of Anthropic's API (`fake_models`, the one fake), then replayed with
that fake stopped, its answers coming from the recorded exchanges alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import AgentBench, claude_config
from tests.agents.fake_models import Call, Script, Text, anthropic_server

EDIT = {"file_path": "{cwd}/payments/replayed.py", "content": "REPLAYED = 1\n"}
LISTING = "ls payments"


@pytest.fixture(scope="module")
def recorded(payments: tuple[Path, Path], claude_cli: Path,
             run_agentctl: Any) -> tuple[AgentBench, dict[str, Any]]:
    """A run that lists a folder, writes a file and ends; the fake model is gone afterwards."""
    root, repository = payments
    model = anthropic_server()
    bench = AgentBench(root, repository, run_agentctl, {
        "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-test-key-1"})
    bench.config(claude_config(claude_cli))
    try:
        model.script = Script([
            [Text("Looking first."), Call("Bash", {"command": LISTING, "description": "list"})],
            [Call("Write", EDIT)],
            [Text("done")]])
        run = bench.start(bench.submit("Add replayed.py"), "claude")
    finally:
        model.close()  # nothing answers at its address now
    assert run["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), run
    return bench, run


def _replay(bench: AgentBench, run_id: str, *flags: str,
            env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    result = bench.cli("run", "replay", run_id, *flags, "--json", expect=(0, 1), env=env)
    document = result.json()
    assert isinstance(document, dict)
    return result.returncode, document


def test_a_replay_with_the_model_stopped_is_identical_and_streams_the_same_events(
        recorded: tuple[AgentBench, dict[str, Any]]) -> None:
    bench, run = recorded
    no_model = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}  # no key, no endpoint
    code, report = _replay(bench, run["runId"], env=no_model)
    assert report["identical"] is True and report["differences"] == [], report
    assert code == 0 and report["replayOf"] == run["runId"]
    assert report["requestsReplayed"] == report["requestsRecorded"] == 3
    assert report["decisionChanges"] == []
    calls = bench.calls(report["runId"])
    assert [c["toolName"] for c in calls] == ["claude.Bash", "claude.Write"], calls
    assert bench.json("run", "show", report["runId"])["replayOf"] == run["runId"]
    created = [e for e in bench.json("events", "--run", report["runId"])
               if e["type"] == "RunCreated"]
    assert created[0]["payload"]["replayOf"] == run["runId"]
    patch = bench.cli("run", "diff", report["runId"]).stdout
    assert "REPLAYED = 1" in patch
    recorded_events, replayed_events = _answers(bench, run["runId"]), _answers(bench,
                                                                              report["runId"])
    assert replayed_events == recorded_events and all(
        answer.startswith("event: message_start\ndata: ") for answer in replayed_events)


def _answers(bench: AgentBench, run_id: str) -> list[str]:
    """The model's answers as the run's gateway relayed them (the SSE bytes, kept in each
    model-exchange.json), the attempt's directory written as {attempt}."""
    steps = bench.steps(run_id)
    directory = next(s for s in steps if s["type"] == "PREPARE_WORKSPACE")["attributes"]["path"]
    answers = []
    for step in steps:
        if step["type"] == "MODEL_PLANNING":
            kept = next(a for a in step["artifacts"] if a["name"] == "model-exchange.json")
            exchange = json.loads(bench.cli("artifact", "show", kept["artifactId"]).stdout)
            answers.append(exchange["response"].replace(directory, "{attempt}"))
    return answers


def test_a_detached_replay_is_played_by_a_worker_and_reported_by_run_show(
        recorded: tuple[AgentBench, dict[str, Any]]) -> None:
    bench, run = recorded
    no_model = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
    queued = bench.cli("run", "replay", run["runId"], "--detach", "--json", env=no_model).json()
    assert queued["status"] == "QUEUED" and queued["replayOf"] == run["runId"], queued
    assert "identical" not in queued  # nothing to compare yet
    worker = bench.cli("worker", "--once", env=no_model)  # a real worker process
    assert f"{queued['runId']}: COMPLETED" in worker.stderr or \
        f"{queued['runId']}: NEEDS_APPROVAL" in worker.stderr, worker.stderr
    shown = bench.json("run", "show", queued["runId"])
    assert shown["replayOf"] == run["runId"] and shown["identical"] is True, shown
    assert shown["differences"] == [] and shown["decisionChanges"] == []
    assert shown["requestsReplayed"] == shown["requestsRecorded"] == 3
    assert [c["toolName"] for c in bench.calls(queued["runId"])] == ["claude.Bash",
                                                                     "claude.Write"]
    assert "REPLAYED = 1" in bench.cli("run", "diff", queued["runId"]).stdout
    said = bench.cli("run", "show", queued["runId"]).stdout
    assert f"replays {run['runId']}: 3/3 model requests answered from the record; " \
           "identical" in said, said


def test_a_replay_whose_request_differs_stops_with_the_diff(
        recorded: tuple[AgentBench, dict[str, Any]], claude_cli: Path, tmp_path: Path) -> None:
    """The verification plan is part of the prompt: another plan makes the first request
    differ from its recording, and the replay stops there instead of answering."""
    bench, run = recorded
    other = tmp_path / "other.toml"
    other.write_text(claude_config(claude_cli).replace(
        'commands = ["python3 -m unittest discover -s tests -t ."]',
        'commands = ["python3 -m unittest discover -s tests -t . -v"]'))
    code, report = _replay(bench, run["runId"], "--config", str(other))
    assert code == 1 and report["identical"] is False
    first = report["differences"][0]
    assert first.startswith("model request 1 does not match its recording"), first
    changed = [line for line in first.splitlines() if line[:1] in "+-"
               and not line.startswith(("---", "+++"))]
    assert changed == [
        "-Verification commands agentctl runs afterwards: python3 -m unittest discover -s tests "
        "-t .\\n",
        "+Verification commands agentctl runs afterwards: python3 -m unittest discover -s tests "
        "-t . -v\\n"], first
    assert report["requestsReplayed"] == 0
    assert bench.calls(report["runId"]) == []  # no made-up answer: the agent did nothing
    assert report["verdict"]["status"] == "FAILED_AGENT_COULD_NOT_COMPLETE"


def test_a_what_if_with_a_stricter_command_rule_lists_the_denied_call(
        recorded: tuple[AgentBench, dict[str, Any]], claude_cli: Path, tmp_path: Path) -> None:
    bench, run = recorded
    stricter = tmp_path / "stricter.toml"
    stricter.write_text(claude_config(claude_cli) + '\n[tools.commands]\ndeny = ["ls *"]\n'
                        'allow = ["python3 *"]\n')
    code, report = _replay(bench, run["runId"], "--config", str(stricter))
    assert code == 1 and report["identical"] is False
    assert report["decisionChanges"] == [{
        "step": 1, "tool": "claude.Bash", "before": "ALLOWED",
        "after": "DENIED_BY_COMMAND_GUARD", "rule": "deny: ls *"}], report
    # the model was told of the denial, so the next request is no longer the recorded one
    assert any("model request 2 does not match" in d for d in report["differences"])


def test_replaying_bad_input_is_one_line_and_exit_2(
        recorded: tuple[AgentBench, dict[str, Any]], claude_cli: Path) -> None:
    bench, run = recorded
    before = len(bench.json("run", "list"))
    unknown = bench.cli("run", "replay", "run_nosuchrun", expect=(2,))
    assert len(unknown.stderr.strip().splitlines()) == 1, unknown.stderr
    missing = bench.cli("run", "replay", run["runId"], "--config", "/nonexistent/what-if.toml",
                        expect=(2,))
    assert "what-if.toml" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    assert len(bench.json("run", "list")) == before  # nothing was started
    noop = bench.start(bench.submit("Change nothing"), "noop")
    refused = bench.cli("run", "replay", noop["runId"], expect=(2,))
    assert "only a claude, codex or gemini run" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    queued = len(bench.json("run", "list"))
    detached = bench.cli("run", "replay", noop["runId"], "--detach", expect=(2,))
    assert "only a claude, codex or gemini run" in detached.stderr
    assert len(detached.stderr.strip().splitlines()) == 1
    assert len(bench.json("run", "list")) == queued  # nothing was queued
    bench.config(claude_config(claude_cli).replace(str(claude_cli), "/nonexistent/claude"))
    try:  # a claude run that never reached its model: nothing on record
        silent = bench.start(bench.submit("Never starts"), "claude")
    finally:
        bench.config(claude_config(claude_cli))
    empty = bench.cli("run", "replay", silent["runId"], expect=(2,))
    assert "has no recorded model exchanges" in empty.stderr, empty.stderr
    assert len(empty.stderr.strip().splitlines()) == 1
