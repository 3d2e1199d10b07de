"""`agentctl run replay` with the real Gemini CLI: recorded against the scripted fake of
Gemini's API (`fake_gemini`), replayed with that fake stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agents.conftest import AgentBench
from tests.agents.fake_gemini import gemini_server
from tests.agents.fake_models import Call, Script, Text
from tests.agents.test_gemini import gemini_config


def test_a_gemini_run_replayed_with_the_model_stopped_is_identical(
        payments: tuple[Path, Path], gemini_cli: Path, run_agentctl: Any) -> None:
    root, repository = payments
    model = gemini_server()
    bench = AgentBench(root, repository, run_agentctl, {
        "GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": "AIza-replay-test-1"})
    bench.config(gemini_config(gemini_cli))
    model.script = Script([[Text("Listing."), Call("run_shell_command", {
        "command": "ls payments", "description": "list"})], [Text("done")]])
    try:
        run = bench.start(bench.submit("List the payments package"), "gemini")
    finally:
        model.close()
    result = bench.cli("run", "replay", run["runId"], "--json", expect=(0, 1))
    report = result.json()
    assert report["identical"] is True, (report["differences"], report["requestsRecorded"],
                                         report["requestsReplayed"], report["verdict"])
    assert result.returncode == 0
    assert report["requestsReplayed"] == report["requestsRecorded"] == 2
    assert [c["toolName"] for c in bench.calls(report["runId"])] == \
        [c["toolName"] for c in bench.calls(run["runId"])] == ["gemini.run_shell_command"]
