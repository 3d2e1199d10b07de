"""`agentctl events` (filters, JSON, --follow), and `agentctl audit verify` on a tampered log."""

from __future__ import annotations

import json
import os
import selectors
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

EVENT_KEYS = ["seq", "type", "taskId", "runId", "attemptId", "stepId", "payload", "createdAt",
              "prevHash", "hash"]
GENESIS = "0" * 64


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_cli) -> dict:
    """A home whose log holds 8 events: a session, three tasks (one denied), a cancellation."""
    root = tmp_path_factory.mktemp("events")
    repo = repo_maker(root / "repo", {"README.md": "# repo\n"})
    home, cwd = root / "home", root / "cwd"
    cwd.mkdir()

    def run(*args: str) -> dict:
        result = run_cli(*args, home=home, cwd=cwd)
        assert result.returncode in (0, 2), result.stderr
        return result.json()

    submit = ("task", "submit", "--repo", str(repo), "--type", "bug_fix", "--json")
    session = run("session", "start", "--title", "t", "--json")
    first = run(*submit, "--instruction", "first")
    second = run(*submit, "--instruction", "second", "--autonomy", "auto_pr")
    third = run(*submit, "--instruction", "third")
    run("task", "cancel", third["taskId"], "--json")
    return {"home": home, "cwd": cwd, "repo": repo, "session": session["sessionId"],
            "tasks": [first["taskId"], second["taskId"], third["taskId"]]}


@pytest.fixture
def tampered(logged: dict, copy_home):  # type: ignore[no-untyped-def]
    """A private copy of the logged home, and a function running SQL on its database."""
    home = copy_home(logged["home"])

    def sql(statement: str, *params: object) -> None:
        with sqlite3.connect(home / "agentctl.db") as connection:
            assert connection.execute(statement, params).rowcount >= 1
        connection.close()

    return home, sql


def test_events_json_is_the_whole_chain_in_order(logged: dict, run_cli) -> None:
    result = run_cli("events", "--json", home=logged["home"], cwd=logged["cwd"])
    assert result.returncode == 0, result.stderr
    events = result.json()
    assert [e["type"] for e in events] == [
        "SessionStarted", "TaskSubmitted", "TaskAccepted", "TaskSubmitted", "TaskPolicyDenied",
        "TaskSubmitted", "TaskAccepted", "TaskCancelled"]
    assert [e["seq"] for e in events] == list(range(1, 9))
    assert all(list(e) == EVENT_KEYS for e in events)
    assert events[0]["prevHash"] == GENESIS
    assert all(b["prevHash"] == a["hash"] for a, b in zip(events, events[1:], strict=False))
    assert len({e["hash"] for e in events}) == 8
    first, denied, third = logged["tasks"]
    assert [e["taskId"] for e in events] == [
        None, first, first, denied, denied, third, third, third]
    assert events[0]["payload"]["sessionId"] == logged["session"]
    assert events[1]["payload"]["repository"] == str(logged["repo"].resolve())
    assert "exceeds max_autonomy" in events[4]["payload"]["reason"]
    assert all(e["createdAt"].endswith("Z") for e in events)


def test_events_of_one_task_by_prefix(logged: dict, run_cli) -> None:
    third = logged["tasks"][2]
    result = run_cli("events", "--task", third[5:21], "--json", home=logged["home"],
                     cwd=logged["cwd"])
    assert result.returncode == 0, result.stderr
    assert [(e["seq"], e["type"]) for e in result.json()] == [
        (6, "TaskSubmitted"), (7, "TaskAccepted"), (8, "TaskCancelled")]


def test_events_for_people_show_seq_type_and_ids(logged: dict, run_cli) -> None:
    result = run_cli("events", "--task", logged["tasks"][1], home=logged["home"],
                     cwd=logged["cwd"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[1].split()[0] == "5" and "TaskPolicyDenied" in lines[1]
    assert logged["tasks"][1].startswith(lines[1].split()[4])  # a unique prefix of the task id
    assert "exceeds max_autonomy" in lines[1]  # and what happened to it
    full = run_cli("events", "--task", logged["tasks"][1], "--full", home=logged["home"],
                   cwd=logged["cwd"])
    assert logged["tasks"][1] in full.stdout.splitlines()[1]


def test_events_on_an_empty_home(cli, state_of, home: Path) -> None:
    plain = cli("events")
    assert plain.returncode == 0 and plain.stdout.strip() == "no events"
    as_json = cli("events", "--json")
    assert as_json.returncode == 0 and as_json.json() == []
    verified = cli("audit", "verify")  # nothing to vouch for is not "ok"
    assert verified.returncode == 2 and "no agentctl store at" in verified.stderr
    assert state_of(home) is None


def _read_lines(process: subprocess.Popen, count: int, timeout: float) -> list[str]:
    """`count` lines from the process's stdout, or fail after `timeout` seconds."""
    lines: list[str] = []
    buffer = b""
    deadline = time.monotonic() + timeout
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
    try:
        while len(lines) < count:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"timed out; got {lines!r} and {buffer!r}"
            if not selector.select(remaining):
                continue
            chunk = os.read(process.stdout.fileno(), 65536)  # type: ignore[union-attr]
            assert chunk, f"the process ended early; got {lines!r}"
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            lines += [line.decode() for line in complete]
    finally:
        selector.close()
    return lines


def test_events_follow_prints_new_events_as_they_are_appended(
    agentctl, agentctl_executable: str, repo: Path, home: Path, tmp_path: Path,
) -> None:
    first = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                     "--instruction", "before", "--json").json()["taskId"]
    environment = {**os.environ, "AGENTCTL_HOME": str(home)}
    environment.pop("AGENTCTL_CONFIG", None)
    process = subprocess.Popen([agentctl_executable, "events", "--follow", "--json"],
                               cwd=tmp_path / "cwd",
                               env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        old = [json.loads(line) for line in _read_lines(process, 2, timeout=30)]
        assert [(e["seq"], e["type"], e["taskId"]) for e in old] == [
            (1, "TaskSubmitted", first), (2, "TaskAccepted", first)]
        second = agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                          "--instruction", "while following", "--json").json()["taskId"]
        new = [json.loads(line) for line in _read_lines(process, 2, timeout=30)]
        assert [(e["seq"], e["type"], e["taskId"]) for e in new] == [
            (3, "TaskSubmitted", second), (4, "TaskAccepted", second)]
        assert new[0]["prevHash"] == old[1]["hash"]
        assert process.poll() is None  # still following
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]


def test_concurrent_submits_on_a_fresh_home_keep_one_intact_chain(
    agentctl_executable: str, repo: Path, home: Path, tmp_path: Path, run_agentctl,
) -> None:
    (tmp_path / "cwd").mkdir(exist_ok=True)
    environment = {**os.environ, "AGENTCTL_HOME": str(home)}
    environment.pop("AGENTCTL_CONFIG", None)
    processes = [subprocess.Popen(
        [agentctl_executable, "task", "submit", "--repo", str(repo), "--type", "bug_fix",
         "--instruction", f"concurrent {n}"], cwd=tmp_path / "cwd", env=environment,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for n in range(4)]
    errors = [process.communicate(timeout=120)[1] for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0, 0], errors
    verified = run_agentctl("audit", "verify", home=home, cwd=tmp_path / "cwd")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("ok: 8 events, chain intact")


# --- audit verify ---------------------------------------------------------------------------

def test_audit_verify_passes_on_a_clean_log(logged: dict, run_cli) -> None:
    result = run_cli("audit", "verify", home=logged["home"], cwd=logged["cwd"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: 8 events, chain intact")


@pytest.mark.parametrize(("statement", "seq", "problem"), [
    ("UPDATE event SET payload = '{\"reason\":\"forged\"}' WHERE seq = 5", 5, "edited"),
    ("UPDATE event SET type = 'TaskAccepted' WHERE seq = 5", 5, "edited"),
    ("UPDATE event SET task_id = 'task_01OTHER' WHERE seq = 3", 3, "edited"),
    ("UPDATE event SET created_at = '2001-01-01T00:00:00.000000Z' WHERE seq = 1", 1, "edited"),
    ("UPDATE event SET payload = '{}' WHERE seq = 8", 8, "edited"),
    ("DELETE FROM event WHERE seq = 4", 5, "events 4..4 are missing"),
    ("DELETE FROM event WHERE seq IN (2, 3, 4)", 5, "events 2..4 are missing"),
    ("DELETE FROM event WHERE seq = 1", 2, "events 1..1 are missing"),
    ("DELETE FROM event WHERE seq = 8", 8, "deleted at the end"),
    ("DELETE FROM event WHERE seq >= 6", 8, "the log ends at event 5"),
    ("UPDATE event SET hash = prev_hash WHERE seq = 6", 6, "edited"),
    ("UPDATE event SET seq = 9 WHERE seq = 8", 9, "events 8..8 are missing"),
], ids=["edit-middle-payload", "edit-middle-type", "edit-task-id", "edit-first-time",
        "edit-last", "delete-middle", "delete-several", "delete-first", "delete-last",
        "delete-tail", "edit-hash", "renumber-last"])
def test_audit_verify_exits_3_naming_the_broken_event(
    tampered, run_cli, logged: dict, error_line, statement: str, seq: int, problem: str,
) -> None:
    home, sql = tampered
    sql(statement)
    result = run_cli("audit", "verify", home=home, cwd=logged["cwd"])
    assert result.returncode == 3, (result.stdout, result.stderr)
    line = error_line(result.stderr)
    assert f"event log broken at event {seq}: " in line
    assert problem in line
    assert result.stdout == ""


def test_audit_verify_finds_a_deleted_head_and_tail(tampered, run_cli, logged: dict) -> None:
    home, sql = tampered
    sql("DELETE FROM event WHERE seq = 8")
    sql("DELETE FROM event_head")
    result = run_cli("audit", "verify", home=home, cwd=logged["cwd"])
    assert result.returncode == 3, result.stdout
