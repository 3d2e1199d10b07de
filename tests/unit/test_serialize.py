"""Records to the JSON documents of DESIGN.md §4 and back: camelCase keys, enums, ISO times."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass, replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from agentctl.domain.artifact import Artifact
from agentctl.domain.events import Event
from agentctl.domain.judge import JudgeFinding, JudgeReport
from agentctl.domain.patch import FileChange, Patch, PatchBoundaryCheck, PatchStats
from agentctl.domain.run import (
    Attempt,
    Budget,
    CommandRules,
    ExecutionSpec,
    JudgePolicy,
    PatchBoundary,
    PlannedCheck,
    Run,
    ToolPolicy,
    VerificationPlan,
)
from agentctl.domain.serialize import camel, dumps, from_json, to_json
from agentctl.domain.step import Step, ToolCall, ToolResult
from agentctl.domain.task import Session, SessionMessage, Task
from agentctl.domain.verdict import Approval, ChainLink, Verdict
from agentctl.domain.verification import VerificationCheck, VerificationReport
from agentctl.store.codec import from_row, to_row

T0 = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)

NAMES = ["Task", "Session", "SessionMessage", "Run", "Attempt", "Step", "ToolCall", "Artifact",
         "Patch", "VerificationReport", "JudgeReport", "Verdict", "Approval", "Event"]


@pytest.mark.parametrize("name", NAMES)
def test_record_round_trips_through_json_text(samples: dict[str, object], name: str) -> None:
    record = samples[name]
    text = json.dumps(to_json(record))
    assert from_json(type(record), json.loads(text)) == record


@pytest.mark.parametrize("name", NAMES)
def test_record_round_trips_through_a_database_row(samples: dict[str, object], name: str) -> None:
    record = samples[name]
    row = to_row(record)
    assert all(value is None or isinstance(value, (str, int, float, bool))
               for value in row.values())
    assert from_row(type(record), row) == record


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
    assert from_json(datetime, "2025-01-02T03:04:05.678901Z") == T0


def test_decoding_accepts_snake_case_keys_too(samples: dict[str, object]) -> None:
    task = samples["Task"]
    document = {f.name: value for f, value in zip(fields(Task), to_json(task).values(), strict=True)}  # type: ignore[union-attr]
    assert from_json(Task, document) == task


def test_decoding_without_a_required_key_names_it(samples: dict[str, object]) -> None:
    document = to_json(samples["Task"])
    del document["baseRef"]  # type: ignore[union-attr]
    with pytest.raises(KeyError, match="baseRef"):
        from_json(Task, document)


def test_decoding_fills_defaults_for_optional_keys(samples: dict[str, object]) -> None:
    document = to_json(samples["Task"])
    for key in ("labels", "allowedPaths", "sessionId", "statusReason"):
        del document[key]  # type: ignore[union-attr]
    decoded = from_json(Task, document)
    assert decoded.labels == {} and decoded.allowed_paths == () and decoded.session_id is None


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
