"""Every legal and every illegal status change of Task, Run, Attempt and Step.

The expected tables below are written out independently of agentctl/domain/transitions.py, so a
change to the code's table is a deliberate change to this contract, not a silent one.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctl.domain import transitions
from agentctl.domain.enums import (
    AttemptStatus,
    PrEligibility,
    RunStatus,
    StepStatus,
    StepType,
    TaskStatus,
    VerdictStatus,
)
from agentctl.domain.errors import AgentctlError, IllegalTransition, InvariantViolation
from agentctl.domain.run import Attempt
from agentctl.domain.step import Step
from agentctl.domain.transitions import advance, can_advance, is_terminal
from agentctl.domain.verdict import Verdict

T, R, A, S = TaskStatus, RunStatus, AttemptStatus, StepStatus

EXPECTED: dict[type[StrEnum], tuple[str, dict[StrEnum, set[StrEnum]]]] = {
    TaskStatus: ("task", {
        T.DRAFT: {T.ACCEPTED, T.POLICY_DENIED, T.CANCELLED},
        T.ACCEPTED: {T.READY_FOR_RUN, T.POLICY_DENIED, T.CANCELLED},
        T.READY_FOR_RUN: {T.RUNNING, T.CANCELLED, T.ARCHIVED},
        T.RUNNING: {T.COMPLETED, T.FAILED, T.READY_FOR_RUN, T.CANCELLED},
        T.COMPLETED: {T.RUNNING, T.CANCELLED, T.ARCHIVED},
        T.FAILED: {T.RUNNING, T.CANCELLED, T.ARCHIVED},
        T.POLICY_DENIED: {T.ARCHIVED},
        T.CANCELLED: {T.ARCHIVED},
        T.ARCHIVED: set(),
    }),
    RunStatus: ("run", {
        R.CREATED: {R.QUEUED, R.CANCELLED},
        R.QUEUED: {R.LEASED, R.CANCELLED, R.EXPIRED},
        R.LEASED: {R.PREPARING_WORKSPACE, R.QUEUED, R.FAILED, R.CANCELLED},
        R.PREPARING_WORKSPACE: {R.RUNNING_AGENT, R.QUEUED, R.FAILED, R.CANCELLED},
        R.RUNNING_AGENT: {R.VERIFYING, R.JUDGING, R.QUEUED, R.FAILED, R.CANCELLED},
        R.VERIFYING: {R.JUDGING, R.QUEUED, R.FAILED, R.CANCELLED},
        R.JUDGING: {R.COMPLETED, R.NEEDS_APPROVAL, R.QUEUED, R.FAILED, R.CANCELLED},
        R.NEEDS_APPROVAL: {R.COMPLETED, R.CANCELLED},
        R.COMPLETED: set(),
        R.FAILED: set(),
        R.CANCELLED: set(),
        R.EXPIRED: set(),
    }),
    AttemptStatus: ("attempt", {
        A.STARTING: {A.ACTIVE, A.FAILED, A.LEASE_EXPIRED, A.CANCELLED},
        A.ACTIVE: {A.COMPLETED, A.FAILED, A.LEASE_EXPIRED, A.CANCELLED},
        A.COMPLETED: set(),
        A.FAILED: set(),
        A.LEASE_EXPIRED: set(),
        A.CANCELLED: set(),
    }),
    StepStatus: ("step", {
        S.STARTED: {S.SUCCEEDED, S.FAILED, S.SKIPPED, S.DENIED, S.TIMED_OUT},
        S.SUCCEEDED: set(),
        S.FAILED: set(),
        S.SKIPPED: set(),
        S.DENIED: set(),
        S.TIMED_OUT: set(),
    }),
}

CODE_TABLES = {TaskStatus: transitions.TASK, RunStatus: transitions.RUN,
               AttemptStatus: transitions.ATTEMPT, StepStatus: transitions.STEP}


def _pairs(legal: bool) -> list[object]:
    out = []
    for enum, (entity, table) in EXPECTED.items():
        for current in enum:
            for target in enum:
                if (target in table[current]) is legal:
                    out.append(pytest.param(entity, current, target,
                                            id=f"{entity}:{current.value}->{target.value}"))
    return out


LEGAL = _pairs(True)
ILLEGAL = _pairs(False)


@pytest.mark.parametrize("enum", list(EXPECTED), ids=lambda e: e.__name__)
def test_code_table_is_the_documented_table(enum: type[StrEnum]) -> None:
    code = {status: set(targets) for status, targets in CODE_TABLES[enum].items()}
    assert code == EXPECTED[enum][1]


@pytest.mark.parametrize("enum", list(EXPECTED), ids=lambda e: e.__name__)
def test_every_status_has_a_row_and_targets_stay_in_the_enum(enum: type[StrEnum]) -> None:
    table = CODE_TABLES[enum]
    assert set(table) == set(enum)
    assert all(isinstance(target, enum) for targets in table.values() for target in targets)


@pytest.mark.parametrize(("entity", "current", "target"), LEGAL)
def test_legal_transition_returns_the_target(entity: str, current: StrEnum,
                                             target: StrEnum) -> None:
    assert can_advance(current, target)
    assert advance(current, target) is target


@pytest.mark.parametrize(("entity", "current", "target"), ILLEGAL)
def test_illegal_transition_raises_naming_both_states(
    entity: str, current: StrEnum, target: StrEnum,
) -> None:
    assert not can_advance(current, target)
    with pytest.raises(IllegalTransition) as caught:
        advance(current, target)
    message = str(caught.value)
    assert message == f"{entity} cannot go from {current.value} to {target.value}"
    assert (caught.value.entity, caught.value.current, caught.value.target) == (
        entity, current.value, target.value)


def test_illegal_transition_message_carries_the_detail() -> None:
    with pytest.raises(IllegalTransition, match=r"^task cannot go from ARCHIVED to RUNNING: "
                                                r"task task_X$"):
        advance(T.ARCHIVED, T.RUNNING, "task task_X")


def test_illegal_transition_is_a_user_facing_domain_error_with_exit_code_2() -> None:
    assert issubclass(IllegalTransition, InvariantViolation)
    assert issubclass(IllegalTransition, AgentctlError)
    assert IllegalTransition("run", "COMPLETED", "QUEUED").exit_code == 2


@pytest.mark.parametrize("status", [s for enum in EXPECTED for s in enum], ids=str)
def test_no_status_transitions_to_itself(status: StrEnum) -> None:
    assert not can_advance(status, status)


@pytest.mark.parametrize("status", [s for enum in EXPECTED for s in enum], ids=str)
def test_terminal_means_no_way_out(status: StrEnum) -> None:
    entity, table = EXPECTED[type(status)]
    assert is_terminal(status) is (not table[status])


def test_terminal_and_active_run_sets() -> None:
    assert transitions.TERMINAL_RUN == {R.COMPLETED, R.FAILED, R.CANCELLED, R.EXPIRED}
    assert transitions.ACTIVE_RUN == {R.LEASED, R.PREPARING_WORKSPACE, R.RUNNING_AGENT,
                                      R.VERIFYING, R.JUDGING}
    assert transitions.UNFINISHED_RUN == {R.CREATED, R.QUEUED, *transitions.ACTIVE_RUN}
    assert transitions.RUNNABLE_TASK == {T.READY_FOR_RUN, T.RUNNING, T.COMPLETED, T.FAILED}


@pytest.mark.parametrize("status", list(RunStatus), ids=str)
def test_every_unfinished_or_waiting_run_can_be_cancelled(status: RunStatus) -> None:
    assert can_advance(status, R.CANCELLED) is (status not in transitions.TERMINAL_RUN)


@pytest.mark.parametrize("status", list(TaskStatus), ids=str)
def test_cancelled_denied_and_archived_tasks_never_run_again(status: TaskStatus) -> None:
    if status in (T.CANCELLED, T.POLICY_DENIED, T.ARCHIVED):
        assert not can_advance(status, T.RUNNING)
        assert not can_advance(status, T.READY_FOR_RUN)


def test_only_an_accepted_task_becomes_ready_for_run() -> None:
    assert {s for s in TaskStatus if can_advance(s, T.READY_FOR_RUN)} == {T.ACCEPTED, T.RUNNING}


@given(st.data())
def test_random_walks_follow_the_table_until_a_terminal_status(data: st.DataObject) -> None:
    enum = data.draw(st.sampled_from(list(EXPECTED)))
    entity, table = EXPECTED[enum]
    status = data.draw(st.sampled_from(list(enum)))
    for _ in range(12):
        target = data.draw(st.sampled_from(list(enum)))
        if target in table[status]:
            status = advance(status, target)
        else:
            with pytest.raises(IllegalTransition, match=f"{status.value} to {target.value}"):
                advance(status, target)
        if not table[status]:
            assert is_terminal(status)
            break


# --- the records go through the same table ----------------------------------------------------

LATER = datetime(2025, 6, 1, tzinfo=UTC)


def _attempt(status: AttemptStatus) -> Attempt:
    return Attempt(attempt_id="attempt_1", run_id="run_1", attempt_number=1, worker_id="w",
                   lease_id="lease_1", status=status, started_at=LATER, last_heartbeat_at=LATER,
                   lease_expires_at=LATER + timedelta(seconds=30))


def _step(status: StepStatus) -> Step:
    return Step(step_id="step_1", run_id="run_1", attempt_id="attempt_1", sequence_number=1,
                type=StepType.LOAD_CONTEXT, status=status, title="read", started_at=LATER)


def test_run_record_refuses_an_illegal_transition_naming_both_states(make_run) -> None:
    run = make_run(status=R.QUEUED)
    with pytest.raises(IllegalTransition, match="run cannot go from QUEUED to JUDGING: run run_1"):
        run.advanced(R.JUDGING, LATER)
    assert run.advanced(R.LEASED, LATER).status is R.LEASED


@pytest.mark.parametrize("terminal", sorted(transitions.TERMINAL_RUN | {R.NEEDS_APPROVAL}),
                         ids=str)
def test_a_run_never_ends_without_a_verdict(make_run, terminal: RunStatus) -> None:
    source = next(s for s, targets in EXPECTED[RunStatus][1].items() if terminal in targets)
    with pytest.raises(InvariantViolation, match="without a verdict"):
        make_run(status=source).advanced(terminal, LATER)


def _verdict(status: VerdictStatus, eligibility: PrEligibility, run_id: str = "run_1") -> Verdict:
    return Verdict(verdict_id="verdict_1", run_id=run_id, status=status,
                   pr_eligibility=eligibility, reasons=("why",), evidence=(), chain=(),
                   decided_at=LATER, decided_by="agentctl rules", spec_digest="sha256:x")


@pytest.mark.parametrize(("status", "eligibility", "ends"), [
    (VerdictStatus.SUCCESS, PrEligibility.ELIGIBLE_FOR_AUTO_PR, R.COMPLETED),
    (VerdictStatus.SUCCESS, PrEligibility.ELIGIBLE_AFTER_HUMAN_APPROVAL, R.NEEDS_APPROVAL),
    (VerdictStatus.SUCCESS_NEEDS_REVIEW, PrEligibility.DRAFT_ONLY, R.COMPLETED),
    (VerdictStatus.FAILED_POLICY, PrEligibility.NOT_ELIGIBLE, R.FAILED),
    (VerdictStatus.CANCELLED, PrEligibility.NOT_ELIGIBLE, R.CANCELLED),
], ids=str)
def test_a_run_ends_where_its_verdict_says(make_run, status: VerdictStatus,
                                            eligibility: PrEligibility, ends: RunStatus) -> None:
    ended = make_run(status=R.JUDGING).concluded(_verdict(status, eligibility), LATER)
    assert ended.status is ends
    assert ended.active_attempt_id is None
    assert (ended.completed_at is None) is (ends is R.NEEDS_APPROVAL)
    assert (ended.failure_summary == "why") is (ends is R.FAILED)


def test_only_the_runs_own_verdict_ends_it(make_run) -> None:
    with pytest.raises(InvariantViolation, match="is not run run_1's"):
        make_run(status=R.JUDGING).concluded(
            _verdict(VerdictStatus.SUCCESS, PrEligibility.DRAFT_ONLY, run_id="run_2"), LATER)


def test_a_run_waiting_for_a_human_closes_under_its_verdict(make_run) -> None:
    verdict = _verdict(VerdictStatus.SUCCESS, PrEligibility.ELIGIBLE_AFTER_HUMAN_APPROVAL)
    waiting = make_run(status=R.NEEDS_APPROVAL)
    assert waiting.closed(verdict, LATER).status is R.COMPLETED
    assert waiting.closed(verdict, LATER, cancelled=True).status is R.CANCELLED
    with pytest.raises(InvariantViolation, match="not waiting for a human"):
        make_run(status=R.JUDGING).closed(verdict, LATER)


def test_a_run_binds_its_spec_base_commit(make_run) -> None:
    with pytest.raises(InvariantViolation, match="base commit"):
        make_run(base_commit="")
    with pytest.raises(InvariantViolation, match="base commit"):
        make_run(base_commit="f" * 40)


@pytest.mark.parametrize(("current", "target"), [(c, t) for c in AttemptStatus
                                                 for t in AttemptStatus], ids=str)
def test_attempt_record_follows_the_table(current: AttemptStatus, target: AttemptStatus) -> None:
    attempt = _attempt(current)
    if can_advance(current, target):
        moved = attempt.with_status(target, LATER, failure_code="X")
        assert moved.status is target
        assert (moved.ended_at is not None) is is_terminal(target)
    else:
        with pytest.raises(IllegalTransition, match=f"attempt cannot go from {current.value} "
                                                    f"to {target.value}"):
            attempt.with_status(target, LATER)


def test_only_the_current_unexpired_lease_may_write() -> None:
    attempt = _attempt(A.ACTIVE)
    attempt.ensure_may_write("lease_1", LATER)
    for lease, now in (("lease_2", LATER), ("lease_1", LATER + timedelta(seconds=30))):
        with pytest.raises(AgentctlError, match="no longer holds lease"):
            attempt.ensure_may_write(lease, now)
    with pytest.raises(AgentctlError, match="LEASE_EXPIRED"):
        attempt.with_status(A.LEASE_EXPIRED, LATER).ensure_may_write("lease_1", LATER)


@pytest.mark.parametrize(("current", "target"), [(c, t) for c in StepStatus
                                                 for t in StepStatus], ids=str)
def test_step_record_follows_the_table(current: StepStatus, target: StepStatus) -> None:
    step = _step(S.STARTED) if current is S.STARTED else replace(_step(S.STARTED), status=current,
                                                                 failure_code="X")
    if can_advance(current, target):
        assert step.finished(target, LATER, failure_code="E").status is target
    else:
        with pytest.raises(IllegalTransition, match=f"step cannot go from {current.value} "
                                                    f"to {target.value}"):
            step.finished(target, LATER)
