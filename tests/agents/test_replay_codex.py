"""`agentctl run replay` with the real Codex CLI: recorded against the scripted fake of the
OpenAI Responses API (`fake_models`, the one fake), replayed with that fake stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agents.conftest import AgentBench
from tests.agents.fake_models import Call, Script, Text, openai_server
from tests.agents.test_codex import codex_config


def test_a_codex_run_replayed_with_the_model_stopped_is_identical(
        payments: tuple[Path, Path], codex_cli: Path, run_agentctl: Any) -> None:
    """Codex's own per-run decorations (item ids, its home's attempt id, the chunk id and
    wall time of exec output) are not what a replay compares."""
    root, repository = payments
    model = openai_server()
    bench = AgentBench(root, repository, run_agentctl, {"FAKE_API_KEY": "sk-openai-test-1"})
    bench.config(codex_config(codex_cli, model.url))
    model.script = Script([[Call("exec_command", {"cmd": "ls payments",
                                                  "yield_time_ms": 120000})],
                           [Text("done")]])
    try:
        run = bench.start(bench.submit("List the payments package"), "codex")
    finally:
        model.close()
    result = bench.cli("run", "replay", run["runId"], "--json")
    report = result.json()
    assert report["identical"] is True, report["differences"]
    assert report["requestsReplayed"] == report["requestsRecorded"] == 2
    assert [c["toolName"] for c in bench.calls(report["runId"])] == \
        [c["toolName"] for c in bench.calls(run["runId"])] == ["codex.Bash"]
