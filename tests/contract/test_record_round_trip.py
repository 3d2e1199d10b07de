"""Every record type, with every field set (nested records too), written through the port and
read back equal: the row codecs lose nothing, on SQLite, PostgreSQL and the fake alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields, is_dataclass, replace
from typing import Any

import pytest

from agentctl.domain.agent import CommandGateway, ModelApi, NativeAgentSettings
from agentctl.domain.enums import (
    BaselineMode,
    Forge,
    PrState,
    TestClassification,
    TestOutcome,
    ToolDecision,
    ToolOutcome,
)
from agentctl.domain.patch import Patch
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Run
from agentctl.domain.sandbox import SandboxLimits, SandboxMode, SandboxProfile
from agentctl.domain.spec import Budget
from agentctl.domain.step import ToolResult
from agentctl.domain.verification import ClassifiedTest, TestCounts
from agentctl.services.unit_of_work import Storage, UnitOfWork
from tests.unit.conftest import T1, sample_records


def unset(value: object, path: str = "") -> list[str]:
    """The fields of `value` (at every depth) left empty, None or at their default."""
    found = []
    for f in fields(value):  # type: ignore[arg-type]
        item = getattr(value, f.name)
        where = f"{path}.{f.name}"
        default = f.default if f.default is not MISSING else \
            f.default_factory() if f.default_factory is not MISSING else MISSING
        if item is None or (isinstance(item, (tuple, Mapping, str)) and not item) or \
                (default is not MISSING and not is_dataclass(item) and item == default):
            found.append(where)
        children = item if isinstance(item, tuple) else (item,)
        for index, child in enumerate(children):
            if is_dataclass(child):
                found += unset(child, where + (f"[{index}]" if item is not child else ""))
    return found


def full_records() -> dict[str, Any]:
    """The unit tests' samples, with what they leave unset filled in."""
    records: dict[str, Any] = {type(r).__name__: r for r in sample_records()}
    run: Run = records["Run"]
    spec = run.execution_spec
    budget = Budget(max_attempts=3, wall_seconds=90.5, max_tool_calls=7, max_output_bytes=1024,
                    backoff_initial_seconds=0.5, backoff_max_seconds=4.0, max_cost_usd=1.25,
                    max_tokens=5000, model_timeout_seconds=45.0,
                    guard_hold_seconds=2.5)
    checks = spec.verification_plan.checks
    spec = replace(
        spec, budget=budget,
        patch_boundary=replace(spec.patch_boundary, allow_generated_changes=True,
                               ignore_generated=("*.pyc",), allow_binary=("*.png",)),
        verification_plan=replace(
            spec.verification_plan, baseline=BaselineMode.AUTO, reruns=5,
            allow_preexisting_failures=False, must_pass=("test_calc.py::test_adds",),
            allow_removed_tests=True, test_paths=("tests", "conftest.py"), blame_runs=7,
            test_patch="--- a/t.py\n+++ b/t.py\n",
            checks=(replace(checks[0], required=False, timeout_seconds=12.5),
                    replace(checks[1], junit_xml="lint.xml"))),
        judge_policy=replace(spec.judge_policy, command="judge --strict"),
        sandbox=SandboxProfile(mode=SandboxMode.OFF, read_only=("~/.m2",), writable=("/tmp/x",),
                               network_allow=("pypi.org:443",),
                               limits=SandboxLimits(max_processes=9, max_memory_mb=99,
                                                    max_file_size_mb=3)),
        agent_settings=NativeAgentSettings(command="claude", model="opus", max_turns=3,
                                           extra_args=("--verbose",), base_url="http://h",
                                           env_key="KEY", mcp=True, prices=("m=1/2",)),
        command_gateway=CommandGateway(api=ModelApi.OPENAI, prices=("m=3/4",)))
    records["Run"] = replace(run, execution_spec=spec, spec_digest=spec.digest(), budget=budget,
                             completed_at=T1, failure_summary="it failed", not_before=T1,
                             replay_of="run_01ORIGINAL",
                             cancel_requested_by="alice", cancel_reason="no longer needed")
    records["Task"] = replace(records["Task"], must_pass=("t::a",), allow_removed_tests=True,
                              test_patch="--- a/t.py\n+++ b/t.py\n")
    records["Step"] = replace(records["Step"], failure_code="exit_1")
    records["ToolCall"] = replace(records["ToolCall"], approved_by="bob", result=ToolResult(
        outcome=ToolOutcome.DENIED, decision=ToolDecision.DENIED_BY_COMMAND_GUARD,
        output="out ✓", exit_code=1, truncated=True, output_bytes=6, duration_ms=7,
        error="denied"))
    patch: Patch = records["Patch"]
    records["Patch"] = replace(
        patch, tree_id="a" * 40,
        file_changes=tuple(replace(change, old_path="old/" + change.path, link_target="target")
                           for change in patch.file_changes),
        boundary_check=replace(patch.boundary_check, unexpected_generated_files=("gen.py",),
                               unexpected_lockfile_changes=("poetry.lock",),
                               unexpected_binary_files=("logo.png",)))
    report = records["VerificationReport"]
    records["VerificationReport"] = replace(report, full_report_artifact="artifact_9", checks=(
        replace(report.checks[0], tests_ran=4, tests=TestCounts(passed=1, failed=2, skipped=3,
                                                                errors=4),
                failing_test_ids=("t::b",), classification=TestClassification.FAIL_TO_PASS,
                classified_tests=(ClassifiedTest(
                    test_id="t::b", classification=TestClassification.PASS_TO_FAIL,
                    candidate=TestOutcome.FAILED, base=TestOutcome.PASSED, message="boom",
                    base_unknown=True, expectations_changed=True),),
                baseline_commit="b" * 40, baseline_cached=True, runner="pytest",
                evidence_runs=("fix evidence", "regression evidence")),))
    judge = records["JudgeReport"]
    records["JudgeReport"] = replace(judge, findings=tuple(
        replace(finding, file_path="a.py", line_number=3, blocks_auto_pr=True)
        for finding in judge.findings))
    verdict = records["Verdict"]
    records["Verdict"] = replace(verdict, tree_id="c" * 40, chain=tuple(
        replace(link, evidence=("artifact_1",)) for link in verdict.chain))
    records["PullRequest"] = PullRequest(
        pr_id="pr_1", run_id="run_1", repository="/srv/repo", branch="agentctl/run_1",
        commit_sha="d" * 40, base_commit="e" * 40, remote="origin", draft=True,
        body_artifact="artifact_5", url="https://forge/pr/1", created_by="alice",
        created_at=T1, forge=Forge.GITLAB, number=12, base="main", state=PrState.MERGED)
    records.pop("Event")  # the event log writes events; tests/unit/test_event_chain reads them
    return records


def _repository(uow: UnitOfWork, name: str) -> Any:
    return getattr(uow, {
        "Task": "tasks", "Session": "sessions", "SessionMessage": "messages", "Run": "runs",
        "Attempt": "attempts", "Step": "steps", "ToolCall": "tool_calls",
        "Artifact": "artifacts", "Patch": "patches", "VerificationReport": "verifications",
        "JudgeReport": "judgements", "Verdict": "verdicts", "Approval": "approvals",
        "PullRequest": "pull_requests"}[name])


FULL = full_records()


@pytest.mark.parametrize("name", sorted(FULL))
def test_the_sample_sets_every_field(name: str) -> None:
    assert unset(FULL[name]) == []


@pytest.mark.parametrize("name", sorted(FULL))
def test_a_record_with_every_field_set_reads_back_equal(storage: Storage, name: str) -> None:
    record = FULL[name]
    key = fields(record)[0].name
    with storage.unit_of_work() as uow:
        _repository(uow, name).add(record)
    with storage.unit_of_work() as uow:
        stored = _repository(uow, name).get(getattr(record, key))
    if name == "Session":
        stored = replace(stored, related_tasks=record.related_tasks)
    assert stored == record


def test_a_run_keeps_the_verification_plan_and_budget_fields_a_hand_written_decoder_dropped(
        storage: Storage) -> None:
    run: Run = FULL["Run"]
    with storage.unit_of_work() as uow:
        uow.runs.add(run)
    with storage.unit_of_work() as uow:
        stored = uow.runs.get(run.run_id)
    plan = stored.execution_spec.verification_plan
    assert (plan.baseline, plan.reruns, plan.allow_preexisting_failures) == \
        (BaselineMode.AUTO, 5, False)
    assert (stored.budget.max_cost_usd, stored.budget.max_tokens) == (1.25, 5000)
