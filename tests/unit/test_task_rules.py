"""Task and Session invariants, the policy that decides READY_FOR_RUN or POLICY_DENIED, and ids."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import FrozenInstanceError, fields
from datetime import UTC, datetime, timedelta

import pytest

from agentctl.domain import ids
from agentctl.domain.enums import (
    AutonomyLevel,
    MessageRole,
    SessionStatus,
    TaskSource,
    TaskStatus,
    autonomy_rank,
)
from agentctl.domain.errors import IllegalTransition, InvariantViolation, PolicyDenied
from agentctl.domain.task import (
    MAX_INSTRUCTION_CHARS,
    MAX_LABEL_CHARS,
    MAX_TITLE_CHARS,
    Session,
    SessionMessage,
    Task,
    TaskPolicy,
    default_title,
    policy_denial_reasons,
    shown_status,
)

T = TaskStatus
LATER = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
MakeTask = Callable[..., Task]


# --- instruction, title, labels -------------------------------------------------------------

@pytest.mark.parametrize("instruction", ["", " ", "\n\t  \n"], ids=repr)
def test_task_with_empty_instruction_is_refused(make_task: MakeTask, instruction: str) -> None:
    with pytest.raises(InvariantViolation, match="instruction cannot be empty"):
        make_task(instruction=instruction)


def test_instruction_at_the_bound_is_accepted_and_one_more_is_refused_as_a_log(
    make_task: MakeTask,
) -> None:
    assert make_task(instruction="x" * MAX_INSTRUCTION_CHARS).instruction
    with pytest.raises(InvariantViolation, match="not logs"):
        make_task(instruction="x" * (MAX_INSTRUCTION_CHARS + 1))


def test_task_never_stores_raw_logs() -> None:
    names = {f.name for f in fields(Task)}
    assert not {n for n in names if re.search(r"log|output|stdout|stderr|transcript", n)}


def test_task_has_the_seed_fields() -> None:
    names = {f.name for f in fields(Task)}
    assert {"task_id", "source", "created_by", "task_type", "title", "instruction", "repository",
            "base_ref", "autonomy_level", "status", "created_at", "labels"} <= names


def test_title_longer_than_the_bound_is_refused(make_task: MakeTask) -> None:
    assert make_task(title="t" * MAX_TITLE_CHARS)
    with pytest.raises(InvariantViolation, match="title"):
        make_task(title="t" * (MAX_TITLE_CHARS + 1))


@pytest.mark.parametrize("labels", [{"": "x"}, {"  ": "x"}, {"k": "v" * (MAX_LABEL_CHARS + 1)}],
                         ids=["empty-key", "blank-key", "long-value"])
def test_bad_labels_are_refused(make_task: MakeTask, labels: dict[str, str]) -> None:
    with pytest.raises(InvariantViolation, match="label"):
        make_task(labels=labels)


def test_task_is_immutable(make_task: MakeTask) -> None:
    task = make_task()
    with pytest.raises(FrozenInstanceError):
        task.status = T.CANCELLED  # type: ignore[misc]


@pytest.mark.parametrize(("instruction", "title"), [
    ("Fix it", "Fix it"),
    ("  Upgrade Jackson\nand fix the tests  ", "Upgrade Jackson"),
    ("x" * 80, "x" * 80),
    ("y" * 81, "y" * 77 + "..."),
])
def test_default_title_is_the_first_line_cut_to_80_characters(instruction: str, title: str) -> None:
    assert default_title(instruction) == title


# --- status changes through the record ------------------------------------------------------

def test_with_status_returns_a_new_task_and_leaves_the_old_one(make_task: MakeTask) -> None:
    draft = make_task()
    accepted = draft.with_status(T.ACCEPTED, LATER)
    assert (draft.status, accepted.status) == (T.DRAFT, T.ACCEPTED)
    assert accepted.updated_at == LATER and accepted.created_at == draft.created_at


def test_with_status_refuses_an_illegal_transition_naming_both_states(task_in) -> None:
    with pytest.raises(IllegalTransition, match="task cannot go from CANCELLED to RUNNING"):
        task_in(T.CANCELLED, "user").with_status(T.RUNNING, LATER)


def test_task_without_repository_cannot_become_ready_for_run(task_in) -> None:
    with pytest.raises(InvariantViolation, match="no resolved repository.*READY_FOR_RUN"):
        task_in(T.ACCEPTED, repository=None).with_status(T.READY_FOR_RUN, LATER)
    with pytest.raises(InvariantViolation, match="READY_FOR_RUN"):
        task_in(T.ACCEPTED, repository="").with_status(T.READY_FOR_RUN, LATER)


def test_task_with_repository_becomes_ready_for_run(task_in) -> None:
    ready = task_in(T.ACCEPTED).with_status(T.READY_FOR_RUN, LATER)
    assert ready.status is T.READY_FOR_RUN


def test_task_without_repository_may_still_be_denied_or_cancelled(task_in) -> None:
    accepted = task_in(T.ACCEPTED, repository=None)
    assert accepted.with_status(T.POLICY_DENIED, LATER, "no repository").status is T.POLICY_DENIED
    assert accepted.with_status(T.CANCELLED, LATER).status is T.CANCELLED


@pytest.mark.parametrize("reason", [None, "", "   "], ids=repr)
def test_policy_denial_must_carry_a_reason(task_in, reason: str | None) -> None:
    with pytest.raises(InvariantViolation, match="reason"):
        task_in(T.ACCEPTED).with_status(T.POLICY_DENIED, LATER, reason)


def test_policy_denial_keeps_its_reason(task_in) -> None:
    denied = task_in(T.ACCEPTED).with_status(T.POLICY_DENIED, LATER, "autonomy too high")
    assert denied.status_reason == "autonomy too high"


@pytest.mark.parametrize("status", list(TaskStatus), ids=str)
def test_only_ready_running_or_finished_tasks_may_create_a_run(task_in, status: TaskStatus) -> None:
    task = task_in(status, "why" if status is T.POLICY_DENIED else None)
    if status in (T.READY_FOR_RUN, T.RUNNING, T.COMPLETED, T.FAILED):
        task.ensure_runnable()
    else:
        with pytest.raises(PolicyDenied, match=f"is {status.value}.*cannot run"):
            task.ensure_runnable()


def test_policy_denied_task_cannot_create_a_run_and_says_why(task_in) -> None:
    task = task_in(T.ACCEPTED).with_status(T.POLICY_DENIED, LATER, "repository not allowed")
    with pytest.raises(PolicyDenied, match="POLICY_DENIED: repository not allowed; it cannot run"):
        task.ensure_runnable()


def test_cancelled_task_schedules_no_new_run(task_in) -> None:
    cancelled = task_in(T.READY_FOR_RUN).with_status(T.CANCELLED, LATER, "not needed")
    with pytest.raises(PolicyDenied, match="CANCELLED"):
        cancelled.ensure_runnable()
    with pytest.raises(IllegalTransition, match="CANCELLED to RUNNING"):
        cancelled.with_status(T.RUNNING, LATER)


# --- sessions -------------------------------------------------------------------------------

def test_session_has_the_seed_fields() -> None:
    names = {f.name for f in fields(Session)}
    assert {"session_id", "owner", "source", "related_tasks", "created_at", "last_activity_at",
            "status"} <= names
    assert {"session_id", "message_id", "role", "content", "created_at", "metadata"} <= {
        f.name for f in fields(SessionMessage)}


def test_session_text_may_be_messy() -> None:
    session = Session(session_id="session_X", owner="alice", source=TaskSource.CLI,
                      title="  mess?? jangan ubah infra!! ", status=SessionStatus.OPEN,
                      created_at=LATER, last_activity_at=LATER)
    message = SessionMessage(message_id="message_X", session_id=session.session_id,
                             role=MessageRole.USER,
                             content="Ya, tapi jangan ubah infra. ¯\\_(ツ)_/¯",
                             created_at=LATER)
    assert message.content.startswith("Ya")


@pytest.mark.parametrize("content", ["", "  ", "\n"], ids=repr)
def test_empty_session_message_is_refused(content: str) -> None:
    with pytest.raises(InvariantViolation, match="empty"):
        SessionMessage(message_id="message_X", session_id="session_X", role=MessageRole.USER,
                       content=content, created_at=LATER)


# --- policy ---------------------------------------------------------------------------------

def _policy(max_autonomy: AutonomyLevel = AutonomyLevel.SUPERVISED_PR,
            forbidden: tuple[str, ...] = (".github/**", "infra/**", ".env"),
            allowlist: tuple[str, ...] = ()) -> TaskPolicy:
    return TaskPolicy(max_autonomy=max_autonomy, forbidden_paths=forbidden,
                      repository_allowlist=allowlist)


def _reasons(*, autonomy: AutonomyLevel = AutonomyLevel.DRY_RUN, allowed: tuple[str, ...] = (),
             repository: str = "/srv/payments-service", **policy: object) -> list[str]:
    return policy_denial_reasons(autonomy=autonomy, allowed_paths=allowed, repository=repository,
                                 policy=_policy(**policy))  # type: ignore[arg-type]


@pytest.mark.parametrize("maximum", list(AutonomyLevel), ids=str)
@pytest.mark.parametrize("requested", list(AutonomyLevel), ids=str)
def test_autonomy_above_max_autonomy_is_denied(requested: AutonomyLevel,
                                               maximum: AutonomyLevel) -> None:
    reasons = _reasons(autonomy=requested, max_autonomy=maximum)
    if autonomy_rank(requested) > autonomy_rank(maximum):
        assert reasons == [f"autonomy {requested.value} exceeds max_autonomy {maximum.value}"]
    else:
        assert reasons == []


def test_autonomy_levels_are_ordered_from_least_to_most_autonomous() -> None:
    order = sorted(AutonomyLevel, key=autonomy_rank)
    assert [a.value for a in order] == ["dry_run", "draft_pr", "supervised_pr", "auto_pr"]


@pytest.mark.parametrize(("allowed", "rule"), [
    (".github/**", ".github/**"),
    (".github/workflows/*.yml", ".github/**"),
    ("infra/main.tf", "infra/**"),
    ("infra/**/*.tf", "infra/**"),
    (".env", ".env"),
    ("config/.env", ".env"),
])
def test_requested_allowed_glob_that_config_forbids_is_denied(allowed: str, rule: str) -> None:
    reasons = _reasons(allowed=("src/**", allowed))
    assert reasons == [f"requested allowed path {allowed!r} is forbidden by config ({rule})"]


@pytest.mark.parametrize("allowed", ["src/**", "pom.xml", "*.py", "test/**", "docs/*.md",
                                     "github/**"])
def test_requested_allowed_glob_outside_the_forbidden_ones_is_accepted(allowed: str) -> None:
    assert _reasons(allowed=(allowed,)) == []


@pytest.mark.parametrize("allowed", ["infra", ".github", ".github/"])
def test_requested_allowed_directory_that_covers_a_forbidden_glob_is_denied(allowed: str) -> None:
    assert _reasons(allowed=(allowed,)) != []


@pytest.mark.parametrize(("allowlist", "repository", "allowed"), [
    ((), "/anywhere/at/all", True),
    (("/srv/payments-service",), "/srv/payments-service", True),
    (("/srv",), "/srv/payments-service", True),
    (("/srv/",), "/srv/payments-service", True),
    (("/srv/pay",), "/srv/payments-service", False),
    (("/srv/payments-service",), "/srv/payments-service-fork", False),
    (("/opt", "/srv"), "/srv/payments-service", True),
    (("https://git.example.com/payments/*",), "https://git.example.com/payments/api.git", True),
    (("https://git.example.com/payments/*",), "https://git.example.com/identity/api.git", False),
    (("https://git.example.com/payments",), "https://git.example.com/payments/api.git", True),
])
def test_repository_allowlist(allowlist: tuple[str, ...], repository: str, allowed: bool) -> None:
    reasons = _reasons(repository=repository, allowlist=allowlist)
    if allowed:
        assert reasons == []
    else:
        assert reasons == [f"repository {repository} is not in the repository allowlist"]


def test_every_denial_reason_is_reported() -> None:
    reasons = _reasons(autonomy=AutonomyLevel.AUTO_PR, allowed=("infra/**", ".github/**"),
                       repository="/elsewhere", allowlist=("/srv",))
    assert len(reasons) == 4
    assert reasons[0].startswith("autonomy auto_pr exceeds")
    assert "'infra/**'" in reasons[1] and "'.github/**'" in reasons[2]
    assert reasons[3].startswith("repository /elsewhere is not")


# --- ids ------------------------------------------------------------------------------------

ULID = r"[0-9A-HJKMNP-TV-Z]{26}"


@pytest.mark.parametrize("prefix", ids.PREFIXES)
def test_ids_are_prefixed_ulids(prefix: str) -> None:
    identifier = ids.new_id(prefix)
    assert re.fullmatch(f"{prefix}_{ULID}", identifier)


def test_every_prefix_the_design_names_exists() -> None:
    assert {"task", "session", "run", "attempt", "step", "toolcall", "artifact", "patch",
            "verification", "judge", "verdict"} <= set(ids.PREFIXES)


def test_unknown_prefix_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown id prefix 'user'"):
        ids.new_id("user")


def test_ids_carry_the_creation_time_in_milliseconds() -> None:
    before = datetime.now(UTC)
    stamp = ids.ulid()[:10]
    after = datetime.now(UTC)
    millis = 0
    for char in stamp:
        millis = millis * 32 + "0123456789ABCDEFGHJKMNPQRSTVWXYZ".index(char)
    moment = datetime.fromtimestamp(millis / 1000, UTC)
    assert before - timedelta(milliseconds=1) <= moment <= after


def test_ids_made_in_a_burst_are_unique_and_sort_in_creation_order() -> None:
    made = [ids.new_id("task") for _ in range(5000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)


def test_ids_made_by_concurrent_threads_are_unique() -> None:
    made: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        batch = [ids.ulid() for _ in range(1000)]
        with lock:
            made.extend(batch)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(made)) == 4000


@pytest.mark.parametrize(("status", "awaiting", "shown"), [
    (TaskStatus.COMPLETED, True, "NEEDS_APPROVAL"),
    (TaskStatus.FAILED, True, "NEEDS_APPROVAL"),
    (TaskStatus.COMPLETED, False, "COMPLETED"),
    (TaskStatus.RUNNING, True, "RUNNING"),  # a newer run is still working: that is the news
    (TaskStatus.CANCELLED, True, "CANCELLED"),
])
def test_a_task_whose_run_awaits_approval_reads_as_that_run(
        status: TaskStatus, awaiting: bool, shown: str) -> None:
    assert shown_status(status, awaiting_approval=awaiting) == shown
