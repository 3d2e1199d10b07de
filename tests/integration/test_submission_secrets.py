"""What a person types may hold a secret: it is redacted before the task is stored, and a
verification command that would need one is refused (its value belongs in [env] passthrough)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.config import defaults
from agentctl.domain.errors import BadInput
from agentctl.home import resolve_home
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.sessions import add_message, start_session
from agentctl.services.actions.tasks import submit_task
from agentctl.store.storage import Store

TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(resolve_home(str(tmp_path / "home")))


def test_a_token_in_the_instruction_title_and_labels_is_stored_redacted(
        store: Store, repo: Path, tmp_path: Path) -> None:
    task = submit_task(store, defaults(), TaskRequest(
        repository=str(repo), task_type="bug_fix", instruction=f"use {TOKEN} to call the API",
        title=f"fix with {TOKEN}", labels={"note": TOKEN}), cwd=tmp_path)

    with store.unit_of_work() as uow:
        stored = uow.tasks.get(task.task_id)
    assert TOKEN not in f"{stored.instruction} {stored.title} {dict(stored.labels)}"
    assert "[REDACTED:github-token]" in stored.instruction


def test_a_verification_command_holding_a_secret_is_refused_and_nothing_is_stored(
        store: Store, repo: Path, tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="holds what looks like a secret") as refused:
        submit_task(store, defaults(), TaskRequest(
            repository=str(repo), task_type="bug_fix", instruction="fix it",
            verification_commands=(f"curl -H 'Authorization: token {TOKEN}' ci",)), cwd=tmp_path)
    assert TOKEN not in str(refused.value)
    assert not (tmp_path / "home" / "agentctl.db").exists()


def test_a_session_message_is_stored_redacted(store: Store) -> None:
    session = start_session(store, title="chat", owner="alice")
    message = add_message(store, session.session_id, role="user",
                          content=f"my token is {TOKEN}")
    assert TOKEN not in message.content
