"""Secrets a verifier prints are redacted before anything is stored or shown: logs, reports,
reasons, the run tree, the event log and the artifact files themselves.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench, in_parallel

PASSWORD = "hunter2hunter2"
TOKEN = "ghp_" + "Zq8" * 12
# The secrets are assembled at run time, so the repository and the commands never spell them.
LEAK = (
    "import sys\n\n"
    "password = 'hunter2' + 'hunter2'\n"
    "token = 'ghp_' + 'Zq8' * 12\n"
    "print('connecting with password=' + password)\n"
    "print('GITHUB_TOKEN=' + token, file=sys.stderr)\n"
    "if sys.argv[1:] == ['--fail']:\n"
    "    print('FAIL: login as admin password=' + password + ' rejected', file=sys.stderr)\n"
    "    sys.exit(1)\n"
)
DOCSTRING = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
             "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("secrets")
    repo = repo_maker(root / "calc", {**CALC_FILES, "leak.py": LEAK})
    bench = Bench(root, run_agentctl)
    # `leak.py --fail` fails on the base too; here it is the agent's failure, run once (the
    # logs of reruns and of the base are redacted alike: tests/pipeline/test_baseline.py)
    bench.config('[verification]\nbaseline = "never"\nreruns = 0\n')
    plan = bench.plan("docstring.toml", DOCSTRING)

    def play(verify: str) -> dict[str, Any]:
        task = bench.submit(repo, "--verify", UNITTEST, "--verify", verify)
        return bench.start(task, f"script:{plan}")

    commands = {"passing": "python3 leak.py", "failing": "python3 leak.py --fail",
                # A command that spells a secret is refused at submit; this one assembles it.
                "echoed": "python3 -c \"print('pass' + 'word=' + 'hunter2' * 2)\""}
    runs = dict(zip(commands, in_parallel(play, commands.values()), strict=True))
    artifacts = {name: bench.artifacts(run["runId"]) for name, run in runs.items()}
    # What `artifact show` prints, for the artifacts a PR or a requester may see.
    shown = [a["artifactId"] for listed in artifacts.values() for a in listed
             if a["visibility"] == "SAFE_FOR_PR" or
             a["type"] == "COMMAND_LOG" and "unittest" not in a["name"]]
    contents = {artifact: bench.artifact_text(artifact) for artifact in shown}
    return {"bench": bench, "runs": runs, "artifacts": artifacts, "contents": contents}


def leaks(text: str) -> list[str]:
    return [secret for secret in (PASSWORD, TOKEN) if secret in text]


def test_the_runs_end_as_their_verifiers_say(leaky: dict[str, Any]) -> None:
    statuses = {name: run["verdict"]["status"] for name, run in leaky["runs"].items()}
    assert statuses == {"passing": "SUCCESS", "failing": "FAILED_VERIFICATION",
                        "echoed": "SUCCESS"}


RUNS = ["passing", "failing", "echoed"]


@pytest.mark.parametrize("name", RUNS)
def test_a_secret_in_verifier_output_reaches_no_safe_for_pr_artifact(
        leaky: dict[str, Any], name: str) -> None:
    safe = [a for a in leaky["artifacts"][name] if a["visibility"] == "SAFE_FOR_PR"]
    assert {"patch.diff", "verifier-report.json"} <= {a["name"] for a in safe}
    for artifact in safe:
        assert leaks(leaky["contents"][artifact["artifactId"]]) == [], artifact["name"]


@pytest.mark.parametrize("name", RUNS)
def test_the_command_log_is_stored_redacted(leaky: dict[str, Any], name: str) -> None:
    logs = [a for a in leaky["artifacts"][name] if a["type"] == "COMMAND_LOG"
            and "unittest" not in a["name"]]
    assert len(logs) == 1
    log = logs[0]
    assert log["redactionStatus"] == "REDACTED"
    content = leaky["contents"][log["artifactId"]]
    assert "password=[REDACTED" in content
    assert leaks(content) == []
    blob = leaky["bench"].home / log["uri"]
    assert leaks(blob.read_text()) == []


def test_no_artifact_file_in_the_home_holds_a_secret(leaky: dict[str, Any]) -> None:
    blobs = [p for p in (leaky["bench"].home / "artifacts").rglob("*") if p.is_file()]
    hashes = {a["sha256"] for listed in leaky["artifacts"].values() for a in listed}
    assert {p.name for p in blobs} == hashes  # content-addressed: one file per distinct content
    assert [str(p) for p in blobs if leaks(p.read_bytes().decode(errors="replace"))] == []


def test_a_failure_summary_cites_the_failing_command_without_its_secret(
        leaky: dict[str, Any]) -> None:
    bench, run = leaky["bench"], leaky["runs"]["failing"]
    reasons = " ".join(run["verdict"]["reasons"])
    assert "python3 leak.py --fail" in reasons
    assert leaks(reasons) == []
    documents = [bench.json("run", "show", run["runId"], "--tree"),
                 bench.json("verdict", "explain", run["runId"]),
                 bench.json("events", "--run", run["runId"])]
    assert leaks(json.dumps(documents)) == []


def test_a_secret_used_as_a_file_name_is_redacted_wherever_the_path_is_stored_or_shown(
        tmp_path, repo_maker, run_agentctl) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    repo = repo_maker(tmp_path / "calc", CALC_FILES)
    bench = Bench(tmp_path, run_agentctl)
    named = f"notes-{TOKEN}.txt"
    plan = bench.plan("named.toml", {"tool": "fs.write", "path": named, "content": "hi\n"},
                      {"tool": "fs.rename", "path": named, "to": f"kept-{TOKEN}.txt"},
                      {"tool": "fs.delete", "path": f"missing-{TOKEN}.txt"})
    run = bench.start(bench.submit(repo, "--verify", UNITTEST), f"script:{plan}")
    tree = bench.cli("run", "show", run["runId"], "--tree").stdout
    tree_json = bench.cli("run", "show", run["runId"], "--tree", "--json").stdout
    assert "kept-" in tree_json and not leaks(tree) and not leaks(tree_json)
    with sqlite3.connect(bench.home / "agentctl.db") as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = "
                                               "'table'")]
        stored = {table: db.execute(f"SELECT * FROM {table}").fetchall() for table in tables}
    db.close()
    assert [table for table, rows in stored.items() if leaks(repr(rows))] == []
    assert bench.cli("audit", "verify").returncode == 0
