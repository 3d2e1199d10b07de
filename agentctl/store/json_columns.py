"""The JSON columns' documents back to records: one explicit function per nested record.

They are the inverse of `serialize.to_json` (camelCase keys); keys added to a record after rows
were written are read with the record's default, so older rows still decode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentctl.domain.enums import (
    ChangeType,
    Severity,
    ToolDecision,
    ToolOutcome,
)
from agentctl.domain.judge import JudgeFinding
from agentctl.domain.patch import FileChange, PatchBoundaryCheck, PatchStats
from agentctl.domain.serialize import from_json
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
from agentctl.domain.step import ToolResult
from agentctl.domain.verdict import ChainLink
from agentctl.domain.verification import VerificationCheck

JsonObject = Mapping[str, Any]
"""A decoded JSON object: its values are whatever the document holds, checked by the records."""


def execution_spec(d: JsonObject) -> ExecutionSpec:
    """The frozen spec: a document that grows with the product (sandbox, agent settings,
    baseline), so it decodes field by field from its type."""
    return from_json(ExecutionSpec, d)


def budget(d: JsonObject) -> Budget:
    return Budget(
        max_attempts=d["maxAttempts"],
        wall_seconds=float(d["wallSeconds"]),
        max_tool_calls=d["maxToolCalls"],
        max_output_bytes=d["maxOutputBytes"],
        backoff_initial_seconds=float(d["backoffInitialSeconds"]),
        backoff_max_seconds=float(d["backoffMaxSeconds"]),
    )


def tool_result(d: JsonObject) -> ToolResult:
    return ToolResult(
        outcome=ToolOutcome(d["outcome"]),
        decision=ToolDecision(d.get("decision", ToolDecision.ALLOWED)),
        output=d.get("output", ""),
        exit_code=d.get("exitCode"),
        truncated=bool(d.get("truncated", False)),
        output_bytes=d.get("outputBytes", 0),
        duration_ms=d.get("durationMs", 0),
        error=d.get("error"),
    )


def tool_result_json(r: ToolResult) -> dict[str, Any]:
    """`to_json(r)` spelt out: every tool call stores one, so it skips the generic walk (a unit
    test holds the two together)."""
    return {
        "outcome": r.outcome.value,
        "decision": r.decision.value,
        "output": r.output,
        "exitCode": r.exit_code,
        "truncated": r.truncated,
        "outputBytes": r.output_bytes,
        "durationMs": r.duration_ms,
        "error": r.error,
    }


def tool_result_document(d: JsonObject) -> dict[str, Any]:
    """The run tree's document of a stored tool result without the record between: what
    `{"ok": r.ok, **to_json(r)}` gives for `r = tool_result(d)`, with the same defaults for keys
    older rows lack (a unit test holds the two together)."""
    outcome = d["outcome"]
    return {
        "ok": outcome == ToolOutcome.OK.value,
        "outcome": outcome,
        "decision": d.get("decision", ToolDecision.ALLOWED.value),
        "output": d.get("output", ""),
        "exitCode": d.get("exitCode"),
        "truncated": bool(d.get("truncated", False)),
        "outputBytes": d.get("outputBytes", 0),
        "durationMs": d.get("durationMs", 0),
        "error": d.get("error"),
    }


def file_change(d: JsonObject) -> FileChange:
    return FileChange(
        path=d["path"],
        change_type=ChangeType(d["changeType"]),
        additions=d["additions"],
        deletions=d["deletions"],
        generated=bool(d["generated"]),
        binary=bool(d["binary"]),
        lockfile=bool(d["lockfile"]),
        test_file=bool(d["testFile"]),
        forbidden_by_policy=bool(d["forbiddenByPolicy"]),
        old_path=d.get("oldPath"),
        link_target=d.get("linkTarget"),
    )


def patch_stats(d: JsonObject) -> PatchStats:
    return PatchStats(
        files_changed=d["filesChanged"],
        additions=d["additions"],
        deletions=d["deletions"],
    )


def patch_boundary_check(d: JsonObject) -> PatchBoundaryCheck:
    return PatchBoundaryCheck(
        passed=bool(d["passed"]),
        allowed_path_violations=tuple(d["allowedPathViolations"]),
        forbidden_path_violations=tuple(d["forbiddenPathViolations"]),
        unexpected_generated_files=tuple(d["unexpectedGeneratedFiles"]),
        unexpected_lockfile_changes=tuple(d["unexpectedLockfileChanges"]),
        matched_rules=dict(d.get("matchedRules", {})),
        unexpected_binary_files=tuple(d.get("unexpectedBinaryFiles", ())),
    )


def verification_check(d: JsonObject) -> VerificationCheck:
    """A check with its per-test results and classification: decoded from its type."""
    return from_json(VerificationCheck, d)


def judge_finding(d: JsonObject) -> JudgeFinding:
    return JudgeFinding(
        severity=Severity(d["severity"]),
        category=d["category"],
        message=d["message"],
        file_path=d.get("filePath"),
        line_number=d.get("lineNumber"),
        blocks_auto_pr=bool(d.get("blocksAutoPr", False)),
    )


def chain_link(d: JsonObject) -> ChainLink:
    return ChainLink(
        check=d["check"],
        passed=bool(d["passed"]),
        detail=d["detail"],
        evidence=tuple(d.get("evidence", ())),
    )


def patch_boundary(d: JsonObject) -> PatchBoundary:
    return PatchBoundary(
        allowed_paths=tuple(d["allowedPaths"]),
        forbidden_paths=tuple(d["forbiddenPaths"]),
        lockfile_patterns=tuple(d["lockfilePatterns"]),
        generated_patterns=tuple(d["generatedPatterns"]),
        allow_lockfile_changes=bool(d.get("allowLockfileChanges", False)),
        allow_generated_changes=bool(d.get("allowGeneratedChanges", False)),
    )


def tool_policy(d: JsonObject) -> ToolPolicy:
    return ToolPolicy(
        commands=command_rules(d["commands"]),
        allow_shell=bool(d["allowShell"]),
        secret_files=tuple(d["secretFiles"]),
        env_allowlist=tuple(d["envAllowlist"]),
        env_passthrough=tuple(d["envPassthrough"]),
        max_result_bytes=d["maxResultBytes"],
    )


def verification_plan(d: JsonObject) -> VerificationPlan:
    return VerificationPlan(
        checks=tuple(planned_check(x) for x in d["checks"]),
        infra_patterns=tuple(d["infraPatterns"]),
    )


def judge_policy(d: JsonObject) -> JudgePolicy:
    return JudgePolicy(
        strict=bool(d["strict"]),
        min_confidence=float(d["minConfidence"]),
        command=d["command"],
        timeout_seconds=float(d["timeoutSeconds"]),
        max_diff_lines=d["maxDiffLines"],
        production_config_patterns=tuple(d["productionConfigPatterns"]),
    )


def command_rules(d: JsonObject) -> CommandRules:
    return CommandRules(
        deny=tuple(d["deny"]),
        ask=tuple(d["ask"]),
        allow=tuple(d["allow"]),
    )


def planned_check(d: JsonObject) -> PlannedCheck:
    return PlannedCheck(
        name=d["name"],
        command=d["command"],
        required=bool(d.get("required", True)),
        timeout_seconds=float(d.get("timeoutSeconds", 600.0)),
        junit_xml=d.get("junitXml"),
    )
