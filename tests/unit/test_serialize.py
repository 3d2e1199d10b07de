"""Records to the JSON documents of DESIGN.md §4 and back: camelCase keys, enums, ISO times."""

from __future__ import annotations

import json
from dataclasses import is_dataclass, replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from agentctl.domain.artifact import Artifact
from agentctl.domain.events import Event
from agentctl.domain.judge import JudgeFinding, JudgeReport
from agentctl.domain.patch import FileChange, Patch, PatchBoundaryCheck, PatchStats
from agentctl.domain.run import Attempt, Run
from agentctl.domain.serialize import camel, dumps, from_json, to_json
from agentctl.domain.spec import (
    Budget,
    CommandRules,
    ExecutionSpec,
    JudgePolicy,
    PatchBoundary,
    PlannedCheck,
    ToolPolicy,
    VerificationPlan,
)
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.domain.verdict import Approval, ChainLink, Verdict
from agentctl.domain.verification import VerificationCheck, VerificationReport
from agentctl.store.rows import evidence
from agentctl.store.rows import runs as rows
from agentctl.store.rows import tasks as task_rows

T0 = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)

NAMES = ["Task", "Session", "SessionMessage", "Run", "Attempt", "Step", "ToolCall", "Artifact",
         "Patch", "VerificationReport", "JudgeReport", "Verdict", "Approval", "Event"]
MAPPINGS = {"Task": task_rows.TASKS, "Session": task_rows.SESSIONS,
            "SessionMessage": task_rows.MESSAGES,
            "Run": rows.RUNS, "Attempt": rows.ATTEMPTS, "Step": rows.STEPS,
            "ToolCall": rows.TOOL_CALLS, "Artifact": rows.ARTIFACTS, "Patch": evidence.PATCHES,
            "VerificationReport": evidence.VERIFICATIONS, "JudgeReport": evidence.JUDGEMENTS,
            "Verdict": evidence.VERDICTS, "Approval": evidence.APPROVALS}


@pytest.mark.parametrize("name", list(MAPPINGS))
def test_record_round_trips_through_a_database_row(samples: dict[str, object], name: str) -> None:
    record = samples[name]
    mapping = MAPPINGS[name]
    row = mapping.to_row(record)  # type: ignore[arg-type]
    assert all(value is None or isinstance(value, (str, int, float, bool))
               for value in row.values())
    decoded = mapping.from_row(row)
    if name == "Session":  # related tasks are not a column: the views add them
        decoded = replace(decoded, related_tasks=record.related_tasks)  # type: ignore[arg-type,attr-defined]
    assert decoded == record


@pytest.mark.parametrize("name", list(MAPPINGS))
def test_row_columns_are_the_tables_columns(samples: dict[str, object], name: str) -> None:
    from agentctl.store import tables

    mapping = MAPPINGS[name]
    columns = {column.name for column in tables.metadata.tables[mapping.table].columns}
    row = mapping.to_row(samples[name])  # type: ignore[arg-type]
    assert set(row) == set(mapping.columns) and mapping.key in row
    assert set(row) <= columns
    assert columns - set(row) <= {"fenced_writes", "directory"}  # written by their own updates


def test_nested_json_columns_decode_what_to_json_wrote(samples: dict[str, object]) -> None:
    run = samples["Run"]
    document = json.loads(json.dumps(to_json(run.execution_spec)))  # type: ignore[attr-defined]
    assert from_json(ExecutionSpec, document) == run.execution_spec  # type: ignore[attr-defined]


def test_event_row_decodes_with_its_stored_payload(samples: dict[str, object]) -> None:
    event = samples["Event"]
    row = {"seq": event.seq, "type": event.type.value, "task_id": event.task_id,  # type: ignore[attr-defined]
           "run_id": event.run_id, "attempt_id": event.attempt_id,  # type: ignore[attr-defined]
           "step_id": event.step_id, "payload": json.dumps(event.payload),  # type: ignore[attr-defined]
           "created_at": to_json(event.created_at), "prev_hash": event.prev_hash,  # type: ignore[attr-defined]
           "hash": event.hash}  # type: ignore[attr-defined]
    assert rows.event_from_row(row) == event


@pytest.mark.parametrize("name", NAMES)
def test_json_keys_are_camel_case_at_every_depth(samples: dict[str, object], name: str) -> None:
    record = samples[name]
    def keys(value: object, inside_free_mapping: bool = False) -> list[str]:
        found: list[str] = []
        if isinstance(value, dict):
            for key, item in value.items():
                if not inside_free_mapping:
                    found.append(key)
                found += keys(item)
        elif isinstance(value, list):
            for item in value:
                found += keys(item)
        return found

    document = to_json(record)
    free = {"labels", "metadata", "attributes", "payload", "policyDecision", "matchedRules"}
    names = [k for k in document] + [  # type: ignore[union-attr]
        k for key, value in document.items()  # type: ignore[union-attr]
        if key not in free for k in keys(value)]
    assert all("_" not in name for name in names), names


def test_task_document_has_the_fixed_keys_of_the_design(samples: dict[str, object]) -> None:
    document = to_json(samples["Task"])
    assert isinstance(document, dict)
    for key in ("taskId status taskType autonomyLevel title instruction repository baseRef "
                "createdBy source sessionId labels createdAt").split():
        assert key in document, key
    assert document["taskType"] == "dependency_upgrade"
    assert document["autonomyLevel"] == "supervised_pr"
    assert document["status"] == "POLICY_DENIED"
    assert document["source"] == "file"
    assert document["createdAt"] == "2025-01-02T03:04:05.678901Z"
    assert document["labels"] == {"team": "payments", "ticket": "PAY-1"}
    assert document["allowedPaths"] == ["pom.xml", "src/**"]


def test_run_document_has_the_fixed_keys_of_the_design(samples: dict[str, object]) -> None:
    document = to_json(samples["Run"])
    assert isinstance(document, dict)
    for key in ("runId taskId number status baseCommit specDigest executionSpec budget createdAt "
                "startedAt completedAt failureSummary").split():
        assert key in document, key
    assert document["executionSpec"]["patchBoundary"]["forbiddenPaths"] == ["infra/**",
                                                                            ".github/**"]
    assert document["executionSpec"]["verificationPlan"]["checks"][0]["junitXml"] == "target/r.xml"
    assert document["specDigest"].startswith("sha256:")


def test_enum_values_are_spelled_as_the_seed_spells_them(samples: dict[str, object]) -> None:
    document = to_json(samples["Step"])
    assert document["type"] == "TOOL_CALL" and document["status"] == "DENIED"  # type: ignore[index]


def test_times_are_utc_iso_with_z_whatever_the_zone_given() -> None:
    elsewhere = T0.astimezone(timezone(timedelta(hours=7)))
    assert to_json(elsewhere) == "2025-01-02T03:04:05.678901Z"
    assert datetime.fromisoformat("2025-01-02T03:04:05.678901Z") == T0


def test_rows_written_before_a_field_existed_decode_with_its_default(
        samples: dict[str, object]) -> None:
    report = samples["VerificationReport"]
    document = to_json(report.checks[0])  # type: ignore[attr-defined]
    for key in ("failingTests", "testsRan", "testReportArtifact"):
        document.pop(key, None)  # type: ignore[union-attr]
    row = evidence.VERIFICATIONS.to_row(report)  # type: ignore[arg-type]
    row["checks"] = json.dumps([document])
    check = evidence.VERIFICATIONS.from_row(row).checks[0]
    assert check.failing_tests == () and check.tests_ran is None


def test_a_nested_document_without_a_required_key_names_it(samples: dict[str, object]) -> None:
    row = evidence.PATCHES.to_row(samples["Patch"])  # type: ignore[arg-type]
    stats = json.loads(str(row["stats"]))
    del stats["filesChanged"]
    row["stats"] = json.dumps(stats)
    with pytest.raises(KeyError, match="filesChanged"):
        evidence.PATCHES.from_row(row)


def test_spec_digest_is_stable_and_depends_on_the_policy(samples: dict[str, object]) -> None:
    spec: ExecutionSpec = samples["Run"].execution_spec  # type: ignore[attr-defined]
    assert spec.digest() == replace(spec).digest()
    wider = replace(spec, patch_boundary=replace(spec.patch_boundary, forbidden_paths=()))
    assert wider.digest() != spec.digest()


def test_dumps_is_readable_unicode_json() -> None:
    text = dumps({"msg": "jangan ubah infra ✓", "when": T0})
    assert "✓" in text and json.loads(text)["when"] == "2025-01-02T03:04:05.678901Z"


def test_values_that_are_not_records_are_refused() -> None:
    with pytest.raises(TypeError, match="cannot serialise"):
        to_json(object())


@pytest.mark.parametrize(("name", "expected"), [
    ("task_id", "taskId"), ("base_commit", "baseCommit"), ("pr_eligibility", "prEligibility"),
    ("seq", "seq"), ("verification_report_id", "verificationReportId"),
])
def test_camel(name: str, expected: str) -> None:
    assert camel(name) == expected


def test_every_record_type_of_the_model_is_covered(samples: dict[str, object]) -> None:
    covered = {type(r) for r in samples.values()}
    nested = {FileChange, PatchStats, PatchBoundaryCheck, ExecutionSpec, PatchBoundary,
              ToolPolicy, CommandRules, VerificationPlan, PlannedCheck, Budget, JudgePolicy,
              ToolResult, VerificationCheck, JudgeFinding, ChainLink}
    assert all(is_dataclass(cls) for cls in covered | nested)
    assert {Task, Session, SessionMessage, Run, Attempt, Step, ToolCall, Artifact, Patch,
            VerificationReport, JudgeReport, Verdict, Approval, Event} <= covered
