"""Which step edited which file, typed: a step's `changed_files` from what it recorded under
`changedFiles`, in the shape `run show --json` has always shown."""

from __future__ import annotations

from datetime import UTC, datetime

from agentctl.domain.enums import ChangeType, StepStatus, StepType
from agentctl.domain.step import ChangedFile, Step, changed_files_attribute, changed_files_of

RENAMED = ChangedFile("docs/notes.txt", ChangeType.RENAMED, 0, 0, "notes.txt")
EDITED = ChangedFile("calc/__init__.py", ChangeType.MODIFIED, 1, 1)


def a_step(attributes: dict[str, object]) -> Step:
    return Step(step_id="step_1", run_id="run_1", attempt_id="attempt_1", sequence_number=1,
                type=StepType.RUN_VERIFIER, status=StepStatus.SUCCEEDED, title="agent",
                started_at=datetime(2025, 1, 2, tzinfo=UTC), attributes=attributes)


def test_the_recorded_attribute_keeps_its_stored_shape() -> None:
    assert changed_files_attribute([EDITED, RENAMED]) == {"changedFiles": [
        {"path": "calc/__init__.py", "changeType": "MODIFIED", "additions": 1, "deletions": 1},
        {"path": "docs/notes.txt", "changeType": "RENAMED", "additions": 0, "deletions": 0,
         "oldPath": "notes.txt"}]}
    assert changed_files_attribute([]) == {}


def test_a_step_reads_its_changed_files_back_typed() -> None:
    step = a_step({"exitCode": 0, **changed_files_attribute([EDITED, RENAMED])})
    assert step.changed_files == (EDITED, RENAMED)
    assert step.changed_files[1].change_type is ChangeType.RENAMED


def test_paths_are_cleaned_as_they_are_recorded() -> None:
    recorded = changed_files_attribute([RENAMED], clean=lambda text: text.replace("notes", "*"))
    assert changed_files_of(recorded) == (ChangedFile("docs/*.txt", ChangeType.RENAMED, 0, 0,
                                                      "*.txt"),)


def test_an_entry_that_is_not_a_changed_file_is_left_out() -> None:
    step = a_step({"changedFiles": [{"path": "a.py"}, "b.py", {"path": "c.py",
                   "changeType": "EXPLODED", "additions": 1, "deletions": 0},
                   EDITED.to_json()]})
    assert step.changed_files == (EDITED,)
    assert a_step({"changedFiles": "a.py"}).changed_files == ()
    assert a_step({}).changed_files == ()


def test_a_binary_file_is_recorded_with_its_size_and_read_back() -> None:
    logo = ChangedFile("logo.png", ChangeType.ADDED, 0, 0, binary_size=2048)
    recorded = changed_files_attribute([logo])
    assert recorded == {"changedFiles": [{"path": "logo.png", "changeType": "ADDED",
                                          "additions": 0, "deletions": 0, "binary": True,
                                          "sizeBytes": 2048}]}
    assert a_step(recorded).changed_files == (logo,)


def test_a_file_tool_that_writes_bytes_with_a_nul_changes_a_binary_file() -> None:
    from agentctl.execution.agents.attribution import file_tool_changes

    written = file_tool_changes("fs.write", {"path": "data.bin"}, {"data.bin": None},
                                {"data.bin": b"\x89PNG\0\x01\x02"})
    assert written == [ChangedFile("data.bin", ChangeType.ADDED, 0, 0, binary_size=7)]
    text = file_tool_changes("fs.write", {"path": "a.txt"}, {"a.txt": b"x\n"}, {"a.txt": b"y\n"})
    assert text == [ChangedFile("a.txt", ChangeType.MODIFIED, 1, 1)]
