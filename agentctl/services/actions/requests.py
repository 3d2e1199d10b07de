"""Parsing a task request from flags or a file (the seed's request JSON as is, or TOML)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agentctl.domain import globs
from agentctl.domain.enums import AutonomyLevel, TaskSource, TaskType, choices
from agentctl.domain.errors import BadInput
from agentctl.domain.toml_text import NotToml, parsed_toml

# Seed spellings first; snake_case so that TOML files read naturally too.
_KEYS: dict[str, str] = {
    "repository": "repository", "baseRef": "base_ref", "base_ref": "base_ref",
    "taskType": "task_type", "type": "task_type", "task_type": "task_type",
    "instruction": "instruction", "title": "title",
    "allowedPaths": "allowed_paths", "allowed_paths": "allowed_paths",
    "forbiddenPaths": "forbidden_paths", "forbidden_paths": "forbidden_paths",
    "verificationCommands": "verification_commands",
    "verification_commands": "verification_commands",
    "autonomyLevel": "autonomy_level", "autonomy_level": "autonomy_level",
    "labels": "labels", "createdBy": "created_by", "created_by": "created_by",
    "sessionId": "session_id", "session_id": "session_id", "source": "source",
    "mustPass": "must_pass", "must_pass": "must_pass",
    "allowRemovedTests": "allow_removed_tests", "allow_removed_tests": "allow_removed_tests",
    "testPatch": "test_patch", "test_patch": "test_patch",
}
# Assigned by agentctl, not by the requester: accepted in a file (the seed's task JSON carries
# them) and ignored.
_ASSIGNED = {"taskId", "status", "createdAt", "updatedAt"}
_LISTS = {"allowed_paths", "forbidden_paths", "verification_commands", "must_pass"}


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRequest:
    repository: str | None = None
    base_ref: str | None = None
    task_type: str | None = None
    instruction: str | None = None
    title: str | None = None
    allowed_paths: tuple[str, ...] = ()
    forbidden_paths: tuple[str, ...] = ()
    verification_commands: tuple[str, ...] = ()
    autonomy_level: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    created_by: str | None = None
    session_id: str | None = None
    source: str | None = None
    must_pass: tuple[str, ...] = ()  # test ids that must pass with the patch
    allow_removed_tests: bool | None = None  # None: not said (a flag overrides only when given)
    test_patch: str | None = None  # the path of a diff of tests the task supplies


def read_request_file(path: Path) -> TaskRequest:
    """The request a file holds (source `file` unless it says); any problem is one BadInput
    line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read task file {path}: {getattr(error, 'strerror', None) or error}"
                       ) from None
    data: object
    if path.suffix.lower() == ".toml":
        try:
            data = parsed_toml(text)
        except NotToml as error:
            raise BadInput(f"task file {path} is not valid TOML: {error}") from None
        except RecursionError:
            raise BadInput(f"task file {path} nests arrays or tables too deeply") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise BadInput(f"task file {path} is not valid JSON: {error.msg} at line "
                           f"{error.lineno}, column {error.colno}") from None
        except RecursionError:
            raise BadInput(f"task file {path} nests arrays or objects too deeply") from None
    if not isinstance(data, dict):
        raise BadInput(f"task file {path} must hold one object with the task's fields")
    out: dict[str, Any] = {}  # checked value by value against TaskRequest's fields below
    for key, value in data.items():
        if key in _ASSIGNED:
            continue
        if key not in _KEYS:
            raise BadInput(f"task file {path}: unknown field {key!r}; expected "
                           f"{', '.join(k for k in _KEYS if '_' not in k)}")
        name = _KEYS[key]
        out[name] = _typed(path, key, name, value)
    if isinstance(out.get("test_patch"), str):  # a path in the file is the file's neighbour
        out["test_patch"] = str(path.parent / out["test_patch"])
    out.setdefault("source", TaskSource.FILE.value)
    return TaskRequest(**out)


def _typed(path: Path, key: str, name: str, value: object) -> object:
    if name in _LISTS:
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise BadInput(f"task file {path}: {key!r} must be a list of strings")
        return tuple(value)
    if name == "allow_removed_tests":
        if not isinstance(value, bool):
            raise BadInput(f"task file {path}: {key!r} must be true or false")
        return value
    if name == "labels":
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise BadInput(f"task file {path}: 'labels' must be an object of string values")
        return dict(value)
    if not isinstance(value, str):
        raise BadInput(f"task file {path}: {key!r} must be a string, got {type(value).__name__}")
    return value


def _ensure_text(request: TaskRequest) -> None:
    """Every string a request holds is text (a shell passes arbitrary bytes as arguments)."""
    for item in fields(TaskRequest):
        value = getattr(request, item.name)
        strings = value if isinstance(value, tuple) else dict(value).values() \
            if isinstance(value, Mapping) else (value,) if isinstance(value, str) else ()
        for text in strings:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise BadInput(f"{item.name.replace('_', ' ')} is not valid UTF-8 text") from None


# Bounds on what a request stores: a path the file system could take, a label map that stays a
# handful of tags, commands and globs of a sensible size.
MAX_PATH_CHARS = 4096
MAX_REF_CHARS = 255
MAX_TITLE_CHARS = 500
MAX_LABELS = 64
MAX_LABEL_KEY_CHARS = 100
MAX_LABEL_VALUE_CHARS = 1000
MAX_ITEMS = 200
MAX_ITEM_CHARS = 4096


def _ensure_bounded(request: TaskRequest) -> None:
    singles = {"repository": (request.repository, MAX_PATH_CHARS),
               "base ref": (request.base_ref, MAX_REF_CHARS),
               "title": (request.title, MAX_TITLE_CHARS),
               "created by": (request.created_by, MAX_LABEL_VALUE_CHARS)}
    for name, (value, limit) in singles.items():
        if value is not None and len(value) > limit:
            raise BadInput(f"{name} is {len(value):,} characters long; at most {limit:,}")
    lists = {"allowed path": request.allowed_paths, "forbidden path": request.forbidden_paths,
             "verification command": request.verification_commands}
    for name, items in lists.items():
        if len(items) > MAX_ITEMS:
            raise BadInput(f"{len(items):,} {name}s; at most {MAX_ITEMS}")
        for item in items:
            if len(item) > MAX_ITEM_CHARS:
                raise BadInput(f"a {name} is {len(item):,} characters long; at most "
                               f"{MAX_ITEM_CHARS:,}")
    if any(not command.strip() for command in request.verification_commands):
        raise BadInput("a verification command is empty; pass --verify CMD with a command")
    labels = request.labels
    if len(labels) > MAX_LABELS:
        raise BadInput(f"{len(labels):,} labels; at most {MAX_LABELS}")
    for key, value in labels.items():
        if len(key) > MAX_LABEL_KEY_CHARS or len(value) > MAX_LABEL_VALUE_CHARS:
            raise BadInput(f"label {key[:40]!r} is too long; at most {MAX_LABEL_KEY_CHARS} "
                           f"characters for a key and {MAX_LABEL_VALUE_CHARS} for a value")


def overridden(request: TaskRequest, flags: TaskRequest) -> TaskRequest:
    """`request` with every field the flags set (not None, not empty) taken from the flags."""
    given = {item.name: getattr(flags, item.name) for item in fields(TaskRequest)
             if getattr(flags, item.name) not in (None, (), {})}
    return replace(request, **given)


def parse_labels(items: list[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    if len(items) > MAX_LABELS:
        raise BadInput(f"{len(items):,} labels; at most {MAX_LABELS}")
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"label {item!r} must be KEY=VALUE")
        labels[key.strip()] = value.strip()
    return labels


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidRequest:
    task_type: TaskType
    autonomy_level: AutonomyLevel
    source: TaskSource
    instruction: str
    allowed_paths: tuple[str, ...]
    forbidden_paths: tuple[str, ...]
    must_pass: tuple[str, ...] = ()


def validate(request: TaskRequest, default_autonomy: AutonomyLevel) -> ValidRequest:
    _ensure_text(request)
    _ensure_bounded(request)
    if request.instruction is None or not request.instruction.strip():
        raise BadInput("instruction is empty; describe the change with --instruction TEXT")
    if not request.task_type:
        raise BadInput(f"missing task type; pass --type, one of: {choices(TaskType)}")
    try:
        task_type = TaskType(request.task_type.strip().lower())
    except ValueError:
        raise BadInput(f"unknown task type {request.task_type!r}; expected one of: "
                       f"{choices(TaskType)}") from None
    try:
        autonomy = AutonomyLevel((request.autonomy_level or default_autonomy.value).strip().lower())
    except ValueError:
        raise BadInput(f"unknown autonomy level {request.autonomy_level!r}; expected one of: "
                       f"{choices(AutonomyLevel)}") from None
    try:
        source = TaskSource(request.source or TaskSource.CLI.value)
    except ValueError:
        raise BadInput(f"unknown source {request.source!r}; expected one of: "
                       f"{choices(TaskSource)}") from None
    if not request.repository or not request.repository.strip():
        raise BadInput("missing repository; pass --repo PATH|URL")
    return ValidRequest(
        task_type=task_type, autonomy_level=autonomy, source=source,
        instruction=request.instruction.strip(),
        allowed_paths=tuple(globs.validate_glob(g) for g in request.allowed_paths),
        forbidden_paths=tuple(globs.validate_glob(g) for g in request.forbidden_paths),
        must_pass=_test_ids(request.must_pass),
    )


def _test_ids(ids: tuple[str, ...]) -> tuple[str, ...]:
    """Must-pass test ids as the runner names them: one line each, no blank ones."""
    for test_id in ids:
        if not test_id.strip() or "\n" in test_id:
            raise BadInput(f"must-pass test {test_id!r} must be one test id as its runner names "
                           "it, e.g. tests/test_x.py::test_y or tests.test_x.T.test_y")
    return tuple(dict.fromkeys(test_id.strip() for test_id in ids))
