"""Parsing a task request from flags or a file, before anything touches the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctl.domain.enums import AutonomyLevel, TaskSource, TaskType
from agentctl.domain.errors import BadInput
from agentctl.services.actions.requests import (
    TaskRequest,
    overridden,
    parse_labels,
    read_request_file,
    validate,
)


def request(**overrides: object) -> TaskRequest:
    fields: dict[str, object] = dict(repository="/srv/repo", task_type="bug_fix",
                                     instruction="  Fix it  ")
    fields.update(overrides)
    return TaskRequest(**fields)  # type: ignore[arg-type]


def test_valid_request_is_normalised() -> None:
    valid = validate(request(task_type=" Bug_Fix ", allowed_paths=("./src/**",)),
                     AutonomyLevel.DRY_RUN)
    assert valid.task_type is TaskType.BUG_FIX
    assert valid.autonomy_level is AutonomyLevel.DRY_RUN
    assert valid.source is TaskSource.CLI
    assert valid.instruction == "Fix it"
    assert valid.allowed_paths == ("src/**",)


def test_default_autonomy_applies_when_the_request_does_not_say() -> None:
    assert validate(request(), AutonomyLevel.DRAFT_PR).autonomy_level is AutonomyLevel.DRAFT_PR
    assert validate(request(autonomy_level="auto_pr"),
                    AutonomyLevel.DRAFT_PR).autonomy_level is AutonomyLevel.AUTO_PR


@pytest.mark.parametrize(("overrides", "message"), [
    ({"instruction": None}, "instruction is empty"),
    ({"instruction": " \n "}, "instruction is empty"),
    ({"task_type": None}, "missing task type"),
    ({"task_type": "feature"}, "unknown task type 'feature'; expected one of: dependency_upgrade"),
    ({"autonomy_level": "full"}, "unknown autonomy level 'full'; expected one of: dry_run"),
    ({"source": "email"}, "unknown source 'email'"),
    ({"repository": None}, "missing repository"),
    ({"repository": "  "}, "missing repository"),
    ({"forbidden_paths": ("!x",)}, "negation"),
])
def test_invalid_request_is_bad_input(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(BadInput, match=message):
        validate(request(**overrides), AutonomyLevel.DRY_RUN)


def test_labels_are_key_equals_value() -> None:
    assert parse_labels(["team=payments", " k = v ", "url=a=b", "empty="]) == {
        "team": "payments", "k": "v", "url": "a=b", "empty": ""}
    for bad in ("team", "=x", " =x"):
        with pytest.raises(BadInput, match="KEY=VALUE"):
            parse_labels([bad])


def test_request_file_accepts_seed_and_snake_case_keys(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({
        "taskId": "task_x", "status": "accepted", "createdAt": "2025-01-01",
        "type": "bug_fix", "repository": "r", "baseRef": "main", "instruction": "i",
        "allowedPaths": "src/**", "forbidden_paths": ["infra/**"], "autonomyLevel": "dry_run",
        "labels": {"a": "b"}, "createdBy": "user_123", "sessionId": "session_x",
    }))
    assert read_request_file(path) == TaskRequest(
        task_type="bug_fix", repository="r", base_ref="main", instruction="i",
        allowed_paths=("src/**",), forbidden_paths=("infra/**",), autonomy_level="dry_run",
        labels={"a": "b"}, created_by="user_123", session_id="session_x", source="file")


def test_request_file_in_toml(tmp_path: Path) -> None:
    path = tmp_path / "t.TOML"
    path.write_text('task_type = "docs"\ninstruction = "i"\n[labels]\nx = "y"\n')
    assert read_request_file(path) == TaskRequest(task_type="docs", instruction="i",
                                                  labels={"x": "y"}, source="file")


def test_flags_override_what_a_request_file_says_and_only_what_they_set() -> None:
    from_file = TaskRequest(task_type="docs", instruction="i", labels={"x": "y"}, source="file",
                            allowed_paths=("docs/**",))
    flags = TaskRequest(instruction="better", allowed_paths=(), labels={})
    assert overridden(from_file, flags) == TaskRequest(
        task_type="docs", instruction="better", labels={"x": "y"}, source="file",
        allowed_paths=("docs/**",))


@pytest.mark.parametrize(("name", "content", "message"), [
    ("t.json", "{", "not valid JSON: .* at line 1, column 2"),
    ("t.json", "null", "must hold one object"),
    ("t.json", '{"instruction": 1}', "'instruction' must be a string, got int"),
    ("t.json", '{"allowedPaths": [1]}', "'allowedPaths' must be a list of strings"),
    ("t.json", '{"labels": {"a": 1}}', "'labels' must be an object of string values"),
    ("t.json", '{"prompt": "x"}', "unknown field 'prompt'; expected repository, baseRef"),
    ("t.toml", "a = ", "not valid TOML"),
])
def test_bad_request_file_is_one_bad_input_line(tmp_path: Path, name: str, content: str,
                                                message: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(BadInput, match=message) as caught:
        read_request_file(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_unreadable_request_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="cannot read task file"):
        read_request_file(tmp_path / "missing.json")
    (tmp_path / "latin1.json").write_bytes(b'{"instruction": "caf\xe9"}')
    with pytest.raises(BadInput, match="cannot read task file"):
        read_request_file(tmp_path / "latin1.json")


def test_request_file_carries_must_pass_tests_and_allow_removed_tests(tmp_path: Path) -> None:
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"repository": "/r", "taskType": "bug_fix", "instruction": "x",
                                "mustPass": ["tests/test_a.py::test_b", "tests/test_a.py::test_c"],
                                "allowRemovedTests": True}))
    request = read_request_file(path)
    assert request.must_pass == ("tests/test_a.py::test_b", "tests/test_a.py::test_c")
    assert request.allow_removed_tests is True
    valid = validate(request, AutonomyLevel.DRY_RUN)
    assert valid.must_pass == request.must_pass


@pytest.mark.parametrize(("content", "message"), [
    ({"mustPass": [1]}, "'mustPass' must be a list of strings"),
    ({"allowRemovedTests": "yes"}, "'allowRemovedTests' must be true or false"),
])
def test_bad_intent_in_a_request_file_is_bad_input(tmp_path: Path, content: dict[str, object],
                                                   message: str) -> None:
    path = tmp_path / "task.json"
    path.write_text(json.dumps(content))
    with pytest.raises(BadInput, match=message):
        read_request_file(path)


def test_a_blank_must_pass_test_is_bad_input() -> None:
    with pytest.raises(BadInput, match="must-pass test ' ' must be one test id"):
        validate(TaskRequest(repository="/r", task_type="bug_fix", instruction="x",
                             must_pass=(" ",)), AutonomyLevel.DRY_RUN)
