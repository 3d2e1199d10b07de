"""The seed enums are the vocabulary, spelled exactly as DESIGN.md §1 spells them."""

from __future__ import annotations

from enum import StrEnum

import pytest

from agentctl.domain import enums

SEED = {
    enums.TaskStatus: "DRAFT ACCEPTED POLICY_DENIED READY_FOR_RUN RUNNING COMPLETED FAILED "
                      "CANCELLED ARCHIVED",
    enums.RunStatus: "CREATED QUEUED LEASED PREPARING_WORKSPACE RUNNING_AGENT VERIFYING JUDGING "
                     "COMPLETED FAILED CANCELLED EXPIRED NEEDS_APPROVAL",
    enums.AttemptStatus: "STARTING ACTIVE COMPLETED FAILED LEASE_EXPIRED CANCELLED",
    enums.StepType: "PREPARE_WORKSPACE CLONE_REPOSITORY LOAD_CONTEXT MODEL_PLANNING TOOL_CALL "
                    "APPLY_PATCH RUN_VERIFIER SUMMARIZE_LOG JUDGE_DIFF COLLECT_ARTIFACTS FINALIZE",
    enums.StepStatus: "STARTED SUCCEEDED FAILED SKIPPED DENIED TIMED_OUT",
    enums.ToolDecision: "ALLOWED DENIED_BY_POLICY DENIED_BY_PATH_GUARD DENIED_BY_COMMAND_GUARD "
                        "DENIED_BY_BUDGET REQUIRES_APPROVAL",
    enums.ArtifactType: "PATCH_UNIFIED_DIFF PATCH_SUMMARY TOUCHED_FILES COMMAND_LOG TEST_REPORT "
                        "BUILD_REPORT STATIC_ANALYSIS_REPORT MODEL_TRANSCRIPT_SUMMARY "
                        "VERIFIER_REPORT JUDGE_REPORT COST_REPORT FAILURE_REPORT PR_BODY_DRAFT",
    enums.ArtifactVisibility: "INTERNAL_ONLY VISIBLE_TO_REQUESTER SAFE_FOR_PR SAFE_FOR_PUBLIC_LOG",
    enums.ChangeType: "ADDED MODIFIED DELETED RENAMED COPIED",
    enums.VerificationStatus: "NOT_RUN PASSED FAILED PARTIAL TIMED_OUT INFRA_FAILURE "
                              "SKIPPED_BY_POLICY",
    enums.JudgeStatus: "NOT_RUN PASSED PASSED_WITH_WARNINGS FAILED NEEDS_HUMAN_REVIEW INCONCLUSIVE",
    enums.VerdictStatus: "SUCCESS SUCCESS_NEEDS_REVIEW FAILED_AGENT_COULD_NOT_COMPLETE "
                         "FAILED_VERIFICATION FAILED_POLICY FAILED_INFRASTRUCTURE CANCELLED "
                         "INCONCLUSIVE",
    enums.PrEligibility: "ELIGIBLE_FOR_AUTO_PR ELIGIBLE_AFTER_HUMAN_APPROVAL DRAFT_ONLY "
                         "NOT_ELIGIBLE",
    enums.TaskType: "dependency_upgrade api_migration bug_fix refactor test_fix lint_fix docs "
                    "custom",
    enums.AutonomyLevel: "dry_run draft_pr supervised_pr auto_pr",
}

EVENTS = ("TaskSubmitted TaskAccepted TaskPolicyDenied TaskCancelled RunCreated RunQueued "
          "LeaseAcquired LeaseExpired AttemptStarted AttemptFailed WorkspacePrepared StepStarted "
          "StepCompleted ToolCallRequested ToolCallDenied ToolCallCompleted PatchProduced "
          "VerifierStarted VerifierCompleted JudgeCompleted VerdictDecided ApprovalRecorded "
          "PrRequested PrCreated RunCompleted RunCancelled")


@pytest.mark.parametrize("enum", list(SEED), ids=lambda e: e.__name__)
def test_enum_is_spelled_as_the_seed(enum: type[StrEnum]) -> None:
    assert [member.value for member in enum] == SEED[enum].split()


def test_every_design_event_type_exists() -> None:
    assert set(EVENTS.split()) <= {member.value for member in enums.EventType}


def test_choices_lists_the_values_for_error_messages() -> None:
    assert enums.choices(enums.AutonomyLevel) == "dry_run, draft_pr, supervised_pr, auto_pr"


def test_visibility_is_ordered_from_most_to_least_restricted() -> None:
    ranks = [enums.visibility_rank(v) for v in enums.ArtifactVisibility]
    assert ranks == sorted(ranks) == list(range(4))
