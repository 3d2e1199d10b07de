"""`agentctl session start|say|show|list`, `task submit --session`: messy talk, structured tasks."""

from __future__ import annotations

import re
from pathlib import Path


def start(cli, *args: str) -> dict:  # type: ignore[no-untyped-def]
    result = cli("session", "start", *args, "--json", env={"AGENTCTL_USER": "alice"})
    assert result.returncode == 0, result.stderr
    return result.json()


def test_start_list_and_show_sessions(cli, home: Path) -> None:
    empty = cli("session", "list")
    assert empty.returncode == 0 and "no sessions yet" in empty.stdout

    plain = cli("session", "start", "--title", "Upgrade Jackson")
    assert plain.returncode == 0, plain.stderr
    session_id = plain.stdout.strip()
    assert re.fullmatch(r"session_[0-9A-HJKMNP-TV-Z]{26}", session_id)

    session = start(cli, "--title", "migrate logging across backend services")
    assert session["title"] == "migrate logging across backend services"
    assert session["owner"] == "alice" and session["status"] == "OPEN"
    assert session["relatedTasks"] == [] and session["createdAt"].endswith("Z")

    listed = cli("session", "list", "--json")
    assert [s["sessionId"] for s in listed.json()] == [session["sessionId"], session_id]
    table = cli("session", "list")
    assert session_id in table.stdout and "Upgrade Jackson" in table.stdout

    shown = cli("session", "show", session_id[8:24], "--json")
    assert shown.returncode == 0, shown.stderr
    assert shown.json()["sessionId"] == session_id and shown.json()["messages"] == []
    tasks = cli("task", "list", "--session", session_id, "--json")
    assert tasks.returncode == 0 and tasks.json() == []

    events = cli("events", "--json").json()
    assert [e["type"] for e in events] == ["SessionStarted", "SessionStarted"]
    assert events[0]["payload"]["sessionId"] == session_id


def test_say_adds_messages_in_order_with_their_roles(cli) -> None:
    session_id = start(cli, "--title", "jackson")["sessionId"]
    prefix = session_id[8:20]
    for role, text in [("user", "Upgrade Jackson."), ("system", "Repo mana?"),
                       ("user", "payments-service dulu."),
                       ("agent", "Boleh auto-PR kalau test lulus?")]:
        said = cli("session", "say", prefix, "--role", role, text)
        assert said.returncode == 0, said.stderr
        assert said.stdout.startswith("message_")
    shown = cli("session", "show", prefix, "--json").json()
    assert [(m["role"], m["content"]) for m in shown["messages"]] == [
        ("user", "Upgrade Jackson."), ("system", "Repo mana?"), ("user", "payments-service dulu."),
        ("agent", "Boleh auto-PR kalau test lulus?")]
    assert shown["lastActivityAt"] > shown["createdAt"]
    plain = cli("session", "show", prefix)
    assert "Repo mana?" in plain.stdout
    events = cli("events", "--json").json()
    assert [e["type"] for e in events].count("SessionMessageAdded") == 4


def test_task_submitted_in_a_session_is_related_to_it(cli, repo: Path) -> None:
    session_id = start(cli, "--title", "migrate logging")["sessionId"]
    submitted = cli("task", "submit", "--repo", str(repo), "--type", "refactor",
                    "--instruction", "migrate payments-service logging", "--session",
                    session_id[8:20], "--json")
    assert submitted.returncode == 0, submitted.stderr
    task = submitted.json()
    assert task["sessionId"] == session_id
    shown = cli("session", "show", session_id, "--json").json()
    assert shown["relatedTasks"] == [task["taskId"]]
    assert [t["taskId"] for t in cli("task", "list", "--session", session_id[8:20],
                                     "--json").json()] == [task["taskId"]]
