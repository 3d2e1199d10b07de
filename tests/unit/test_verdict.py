"""The verdict is one pure function; its order of checks is the contract (DESIGN.md §2 step 9)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctl.domain.enums import (
    ApprovalDecision,
    AutonomyLevel,
    ChangeType,
    JudgeStatus,
    PatchApplyStatus,
    PrEligibility,
    Severity,
    VerdictStatus,
    VerificationCheckStatus,
    VerificationStatus,
)
from agentctl.domain.judge import JudgeFinding, JudgeReport
from agentctl.domain.patch import FileChange, Patch, PatchBoundaryCheck, PatchStats
from agentctl.domain.spec import JudgePolicy
from agentctl.domain.verdict import Approval, Evidence, VerdictInputs, decide_verdict, may_open_pr
from agentctl.domain.verification import VerificationCheck, VerificationReport
from tests.unit.conftest import T0

V, E, A = VerdictStatus, PrEligibility, AutonomyLevel
STRICT = JudgePolicy(strict=True, min_confidence=0.7, command=None, timeout_seconds=60,
                     max_diff_lines=1000, production_config_patterns=())
EVIDENCE = Evidence(patch=("artifact_patch", "artifact_touched"),
                    verification=("artifact_verifier", "artifact_log"), judge=("artifact_judge",))


def boundary(passed: bool = True) -> PatchBoundaryCheck:
    return PatchBoundaryCheck(
        passed=passed, allowed_path_violations=(),
        forbidden_path_violations=() if passed else (".github/workflows/deploy.yml",),
        unexpected_generated_files=(), unexpected_lockfile_changes=(),
        matched_rules={} if passed else {".github/workflows/deploy.yml": "forbidden: .github/**"})


def patch(*, passed: bool = True, applies: bool = True) -> Patch:
    change = FileChange(path="src/app.py", change_type=ChangeType.MODIFIED, additions=1,
                        deletions=1, generated=False, binary=False, lockfile=False,
                        test_file=False, forbidden_by_policy=not passed)
    return Patch(patch_id="patch_1", run_id="run_1", attempt_id="attempt_1", base_commit="c" * 40,
                 unified_diff_artifact="artifact_patch", file_changes=(change,),
                 stats=PatchStats(files_changed=1, additions=1, deletions=1),
                 boundary_check=boundary(passed),
                 apply_status=PatchApplyStatus.APPLIES_CLEANLY if applies
                 else PatchApplyStatus.DOES_NOT_APPLY, created_at=T0,
                 apply_error=None if applies else "patch failed: src/app.py:1")


def verification(*statuses: tuple[VerificationCheckStatus, bool]) -> VerificationReport:
    from agentctl.domain.verification import overall_status

    checks = tuple(VerificationCheck(
        name=f"check{n}", command=f"make check{n}", status=status, exit_code=0 if status is
        VerificationCheckStatus.PASSED else 1, duration_seconds=1.0, log_artifact="artifact_log",
        summarized_failure=None if status is VerificationCheckStatus.PASSED
        else f"`make check{n}` {status.value.lower()}: tests/test_x.py::test_y", required=required)
        for n, (status, required) in enumerate(statuses))
    return VerificationReport(verification_report_id="verification_1", run_id="run_1",
                              attempt_id="attempt_1", status=overall_status(checks),
                              checks=checks, full_report_artifact="artifact_verifier",
                              started_at=T0, ended_at=T0)


PASSING = verification((VerificationCheckStatus.PASSED, True))


def judge(status: JudgeStatus = JudgeStatus.PASSED, confidence: float = 1.0,
          blocking: bool = False) -> JudgeReport:
    findings = () if status is JudgeStatus.PASSED and not blocking else (JudgeFinding(
        severity=Severity.WARNING, category="production-config",
        message="changed production config module src/config/settings.py",
        blocks_auto_pr=blocking),)
    return JudgeReport(judge_report_id="judge_1", run_id="run_1", attempt_id="attempt_1",
                       judge="rules", status=status, findings=findings, confidence=confidence,
                       report_artifact="artifact_judge", created_at=T0)


def decide(**overrides: object):  # type: ignore[no-untyped-def]
    inputs = dict(autonomy=A.AUTO_PR, judge_policy=STRICT, patch=patch(),
                  verification=PASSING, judge=judge(), evidence=EVIDENCE)
    inputs.update(overrides)
    return decide_verdict(VerdictInputs(**inputs))  # type: ignore[arg-type]


def test_every_check_passing_under_auto_pr_is_eligible_for_auto_pr() -> None:
    decision = decide()
    assert (decision.status, decision.pr_eligibility) == (V.SUCCESS, E.ELIGIBLE_FOR_AUTO_PR)
    assert [link.check for link in decision.chain] == [
        "boundary", "apply", "verification", "judge", "autonomy", "eligibility"]
    assert all(link.passed for link in decision.chain)


def test_patch_touching_forbidden_path_produces_failed_policy_even_when_everything_else_passes(
) -> None:
    decision = decide(patch=patch(passed=False))
    assert (decision.status, decision.pr_eligibility) == (V.FAILED_POLICY, E.NOT_ELIGIBLE)
    assert decision.reasons[0] == ("patch touches forbidden path .github/workflows/deploy.yml "
                                   "(forbidden: .github/**)")
    assert decision.evidence[:2] == ("artifact_patch", "artifact_touched")
    verification_link = next(link for link in decision.chain if link.check == "verification")
    assert verification_link.passed, "explain still shows that the tests passed"


@pytest.mark.parametrize("other", [
    {"agent_error": "plan step 2 failed"},
    {"verification": verification((VerificationCheckStatus.FAILED, True))},
    {"verification": verification((VerificationCheckStatus.INFRA_FAILURE, True))},
    {"judge": judge(JudgeStatus.PASSED, confidence=1.0)},
    {"patch": patch(passed=False, applies=False)},
], ids=["agent-error", "tests-failed", "infra", "judge-happy", "does-not-apply"])
def test_the_judge_or_any_later_link_cannot_override_a_boundary_failure(other: dict) -> None:  # type: ignore[type-arg]
    overrides = {"patch": patch(passed=False), **other}
    assert decide(**overrides).status is V.FAILED_POLICY


def test_no_patch_is_failed_agent_could_not_complete() -> None:
    decision = decide(patch=None, verification=None, judge=None)
    assert (decision.status, decision.pr_eligibility) == (V.FAILED_AGENT_COULD_NOT_COMPLETE,
                                                          E.NOT_ELIGIBLE)
    assert decision.reasons == ("the agent produced no patch",)


def test_an_agent_error_is_failed_agent_could_not_complete_naming_the_error() -> None:
    decision = decide(agent_error="plan step 3 (fs.replace src/app.py) failed: old text not found",
                      verification=None, judge=None)
    assert decision.status is V.FAILED_AGENT_COULD_NOT_COMPLETE
    assert "old text not found" in decision.reasons[0]


def test_a_patch_that_does_not_apply_is_never_eligible() -> None:
    decision = decide(patch=patch(applies=False))
    assert decision.pr_eligibility is E.NOT_ELIGIBLE
    assert decision.status is V.INCONCLUSIVE
    assert "does not apply" in decision.reasons[0]


def test_required_check_infra_failure_is_failed_infrastructure() -> None:
    decision = decide(verification=verification((VerificationCheckStatus.INFRA_FAILURE, True)))
    assert (decision.status, decision.pr_eligibility) == (V.FAILED_INFRASTRUCTURE, E.NOT_ELIGIBLE)


def test_infrastructure_failure_before_any_evidence_is_failed_infrastructure() -> None:
    decision = decide(patch=None, verification=None, judge=None,
                      infrastructure_failure="clone failed: repository not found",
                      evidence=Evidence(failure=("artifact_failure",)))
    assert decision.status is V.FAILED_INFRASTRUCTURE
    assert decision.evidence == ("artifact_failure",)


@pytest.mark.parametrize("status", [VerificationCheckStatus.FAILED,
                                    VerificationCheckStatus.TIMED_OUT])
def test_required_verifier_failure_blocks_auto_pr(status: VerificationCheckStatus) -> None:
    decision = decide(verification=verification((status, True)))
    assert (decision.status, decision.pr_eligibility) == (V.FAILED_VERIFICATION, E.NOT_ELIGIBLE)
    assert "tests/test_x.py::test_y" in decision.reasons[0]


def test_a_failing_optional_check_sends_a_passing_run_to_review() -> None:
    decision = decide(verification=verification((VerificationCheckStatus.PASSED, True),
                                                (VerificationCheckStatus.FAILED, False)))
    assert decision.status is V.SUCCESS_NEEDS_REVIEW
    assert decision.pr_eligibility is E.ELIGIBLE_AFTER_HUMAN_APPROVAL


def test_no_verification_at_all_never_allows_auto_pr() -> None:
    decision = decide(verification=None)
    assert decision.status is V.SUCCESS_NEEDS_REVIEW
    assert decision.pr_eligibility is not E.ELIGIBLE_FOR_AUTO_PR


def test_judge_warning_changes_eligibility_to_needs_review_under_a_strict_judge() -> None:
    decision = decide(judge=judge(JudgeStatus.PASSED_WITH_WARNINGS))
    assert (decision.status, decision.pr_eligibility) == (V.SUCCESS_NEEDS_REVIEW,
                                                          E.ELIGIBLE_AFTER_HUMAN_APPROVAL)
    assert "production config" in decision.reasons[0]


def test_judge_warning_under_a_lenient_judge_is_success() -> None:
    lenient = replace(STRICT, strict=False)
    decision = decide(judge=judge(JudgeStatus.PASSED_WITH_WARNINGS), judge_policy=lenient)
    assert (decision.status, decision.pr_eligibility) == (V.SUCCESS, E.ELIGIBLE_FOR_AUTO_PR)


def test_a_blocking_finding_needs_review_even_under_a_lenient_judge() -> None:
    lenient = replace(STRICT, strict=False)
    decision = decide(judge=judge(JudgeStatus.PASSED_WITH_WARNINGS, blocking=True),
                      judge_policy=lenient)
    assert decision.status is V.SUCCESS_NEEDS_REVIEW


@pytest.mark.parametrize("status", [JudgeStatus.NEEDS_HUMAN_REVIEW, JudgeStatus.INCONCLUSIVE,
                                    JudgeStatus.NOT_RUN])
def test_an_unhappy_or_absent_judge_sends_the_run_to_review(status: JudgeStatus) -> None:
    decision = decide(judge=judge(status))
    assert decision.status is V.SUCCESS_NEEDS_REVIEW


def test_a_judge_that_says_failed_is_never_eligible_whatever_the_checks_say() -> None:
    decision = decide(judge=judge(JudgeStatus.FAILED))
    assert (decision.status, decision.pr_eligibility) == (V.INCONCLUSIVE, E.NOT_ELIGIBLE)
    assert decision.reasons[0].startswith("the judge said FAILED")


def test_a_critical_finding_is_never_eligible_even_under_a_passing_judge() -> None:
    critical = replace(judge(JudgeStatus.PASSED_WITH_WARNINGS), findings=(JudgeFinding(
        severity=Severity.CRITICAL, category="secret", message="a key in src/app.py"),))
    decision = decide(judge=critical, autonomy=A.SUPERVISED_PR)
    assert (decision.status, decision.pr_eligibility) == (V.INCONCLUSIVE, E.NOT_ELIGIBLE)
    assert "CRITICAL finding: a key in src/app.py" in decision.reasons[0]


def test_low_confidence_judge_cannot_enable_auto_pr() -> None:
    decision = decide(judge=judge(confidence=0.69))
    assert decision.pr_eligibility is E.ELIGIBLE_AFTER_HUMAN_APPROVAL
    assert "confidence 0.69 is below the threshold 0.70" in decision.reasons[0]


@pytest.mark.parametrize(("autonomy", "status", "expected"), [
    (A.DRY_RUN, V.SUCCESS, E.NOT_ELIGIBLE),
    (A.DRAFT_PR, V.SUCCESS, E.DRAFT_ONLY),
    (A.SUPERVISED_PR, V.SUCCESS, E.ELIGIBLE_AFTER_HUMAN_APPROVAL),
    (A.AUTO_PR, V.SUCCESS, E.ELIGIBLE_FOR_AUTO_PR),
    (A.DRY_RUN, V.SUCCESS_NEEDS_REVIEW, E.NOT_ELIGIBLE),
    (A.DRAFT_PR, V.SUCCESS_NEEDS_REVIEW, E.DRAFT_ONLY),
    (A.SUPERVISED_PR, V.SUCCESS_NEEDS_REVIEW, E.ELIGIBLE_AFTER_HUMAN_APPROVAL),
    (A.AUTO_PR, V.SUCCESS_NEEDS_REVIEW, E.ELIGIBLE_AFTER_HUMAN_APPROVAL),
])
def test_eligibility_follows_the_autonomy_level(autonomy: AutonomyLevel, status: VerdictStatus,
                                               expected: PrEligibility) -> None:
    warned = judge(JudgeStatus.PASSED_WITH_WARNINGS) if status is V.SUCCESS_NEEDS_REVIEW \
        else judge()
    decision = decide(autonomy=autonomy, judge=warned)
    assert (decision.status, decision.pr_eligibility) == (status, expected)


def test_a_cancelled_run_is_cancelled_and_not_eligible_whatever_the_evidence() -> None:
    decision = decide(cancelled="cancelled by alice: wrong base branch")
    assert (decision.status, decision.pr_eligibility) == (V.CANCELLED, E.NOT_ELIGIBLE)
    assert decision.reasons == ("cancelled by alice: wrong base branch",)


def test_verdict_evidence_is_every_link_s_artifacts_once_in_chain_order() -> None:
    assert decide().evidence == ("artifact_patch", "artifact_touched", "artifact_verifier",
                                 "artifact_log", "artifact_judge")


check_statuses = st.sampled_from(list(VerificationCheckStatus))
inputs = st.fixed_dictionaries({
    "autonomy": st.sampled_from(list(AutonomyLevel)),
    "boundary_passed": st.booleans(),
    "applies": st.booleans(),
    "has_patch": st.booleans(),
    "agent_error": st.one_of(st.none(), st.just("agent failed")),
    "checks": st.lists(st.tuples(check_statuses, st.booleans()), max_size=3),
    "judge_status": st.sampled_from(list(JudgeStatus)),
    "confidence": st.floats(min_value=0, max_value=1),
    "strict": st.booleans(),
})

_RANK = {E.NOT_ELIGIBLE: 0, E.DRAFT_ONLY: 1, E.ELIGIBLE_AFTER_HUMAN_APPROVAL: 2,
         E.ELIGIBLE_FOR_AUTO_PR: 3}
_CEILING = {A.DRY_RUN: E.NOT_ELIGIBLE, A.DRAFT_PR: E.DRAFT_ONLY,
            A.SUPERVISED_PR: E.ELIGIBLE_AFTER_HUMAN_APPROVAL, A.AUTO_PR: E.ELIGIBLE_FOR_AUTO_PR}


@given(inputs)
def test_properties_that_hold_for_every_combination_of_evidence(case: dict) -> None:  # type: ignore[type-arg]
    the_patch = patch(passed=case["boundary_passed"], applies=case["applies"]) \
        if case["has_patch"] else None
    report = verification(*case["checks"]) if case["checks"] else None
    decision = decide(autonomy=case["autonomy"], patch=the_patch, verification=report,
                      judge=judge(case["judge_status"], case["confidence"]),
                      agent_error=case["agent_error"],
                      judge_policy=replace(STRICT, strict=case["strict"]))
    assert decision.reasons, "a verdict always says why"
    assert _RANK[decision.pr_eligibility] <= _RANK[_CEILING[case["autonomy"]]]
    if decision.status not in (V.SUCCESS, V.SUCCESS_NEEDS_REVIEW):
        assert decision.pr_eligibility is E.NOT_ELIGIBLE
    if the_patch is not None and not case["boundary_passed"]:
        assert decision.status is V.FAILED_POLICY
    if decision.pr_eligibility is E.ELIGIBLE_FOR_AUTO_PR:
        assert decision.status is V.SUCCESS
        assert report is not None and report.status is VerificationStatus.PASSED
        assert case["confidence"] >= STRICT.min_confidence
        assert all(link.passed for link in decision.chain)


def _approval(decision: ApprovalDecision) -> Approval:
    return Approval(approval_id="approval_1", run_id="run_1", verdict_id="verdict_1",
                    decision=decision, by="alice", reason="reviewed", created_at=T0)


@pytest.mark.parametrize(("eligibility", "approvals", "allowed"), [
    (E.NOT_ELIGIBLE, [], False),
    (E.NOT_ELIGIBLE, [ApprovalDecision.APPROVED], False),
    (E.ELIGIBLE_AFTER_HUMAN_APPROVAL, [], False),
    (E.ELIGIBLE_AFTER_HUMAN_APPROVAL, [ApprovalDecision.APPROVED], True),
    (E.ELIGIBLE_AFTER_HUMAN_APPROVAL, [ApprovalDecision.REJECTED], False),
    (E.ELIGIBLE_FOR_AUTO_PR, [], True),
    (E.ELIGIBLE_FOR_AUTO_PR, [ApprovalDecision.REJECTED], False),
    (E.DRAFT_ONLY, [], True),
])
def test_a_pr_needs_eligibility_and_for_supervised_runs_an_approval(
        eligibility: PrEligibility, approvals: list[ApprovalDecision], allowed: bool) -> None:
    ok, why = may_open_pr(eligibility, [_approval(d) for d in approvals])
    assert ok is allowed
    assert why


def test_every_autonomy_and_status_pair_yields_a_verdict() -> None:
    for autonomy, status in itertools.product(A, JudgeStatus):
        assert decide(autonomy=autonomy, judge=judge(status)).reasons


def test_a_task_with_no_verification_command_says_so_not_that_checks_failed() -> None:
    decision = decide(verification=verification())
    assert decision.status is V.SUCCESS_NEEDS_REVIEW
    assert "no verification command configured" in decision.reasons
    assert not any("not every deterministic check passed" in r for r in decision.reasons)
    link = next(link for link in decision.chain if link.check == "verification")
    assert link.detail == "no verification command configured"


def test_the_verification_link_carries_each_checks_test_counts_and_runner() -> None:
    from agentctl.domain.verification import TestCounts

    (check,) = PASSING.checks
    counted = replace(PASSING, checks=(replace(
        check, runner="unittest", tests=TestCounts(passed=69, failed=0, skipped=2)),))
    link = next(link for link in decide(verification=counted).chain
                if link.check == "verification")
    assert link.detail == "69 passed, 0 failed, 2 skipped (unittest)"


def test_patched_files_no_recorded_call_changed_are_a_link_of_the_chain() -> None:
    decision = decide(unattributed=tuple(f"late{n}.txt" for n in range(7)))
    (link,) = [link for link in decision.chain if link.check == "attribution"]
    assert (link.passed, link.detail) == (False, "changed by no recorded call: late0.txt, "
                                          "late1.txt, late2.txt, late3.txt, late4.txt "
                                          "(+2 more in touched-files.json)")
    assert link.evidence == EVIDENCE.patch
    assert [link.check for link in decide().chain if link.check == "attribution"] == []
