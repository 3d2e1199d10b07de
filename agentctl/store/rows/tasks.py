"""Rows of tasks, sessions and their messages."""

from __future__ import annotations

from collections.abc import Mapping

from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.store.rows import Packed, RowMapping, Value, dump, load


def _intent(task: Task) -> Value:
    """What the task asks of the tests, one JSON column; NULL when it asks nothing."""
    if not (task.must_pass or task.allow_removed_tests or task.test_patch):
        return None
    return dump({"mustPass": task.must_pass, "allowRemovedTests": task.allow_removed_tests,
                 **({"testPatch": task.test_patch} if task.test_patch else {})})


def _intent_fields(text: str | None) -> Mapping[str, object]:
    intent = load(text) if text else {}
    return {"must_pass": tuple(intent.get("mustPass", ())),
            "allow_removed_tests": bool(intent.get("allowRemovedTests", False)),
            "test_patch": intent.get("testPatch")}


TASKS = RowMapping(Task, "task", "task_id", "task", packed={
    "intent": Packed(("must_pass", "allow_removed_tests", "test_patch"), _intent, _intent_fields)})
SESSIONS = RowMapping(Session, "session", "session_id", "session",
                      skip=("related_tasks",))  # the tasks' session_id column says
MESSAGES = RowMapping(SessionMessage, "session_message", "message_id", "message")

# The lean reads (store/views.py) decode by these names.
task_from_row = TASKS.from_row
session_from_row = SESSIONS.from_row
session_message_from_row = MESSAGES.from_row
