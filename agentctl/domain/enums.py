"""The seed vocabulary, spelled exactly as the design notes spell it.

Values are what users type and what JSON carries, so they never change once released.
"""

from __future__ import annotations

from enum import StrEnum

from agentctl._speedups.enum_values import plain_values


class TaskStatus(StrEnum):
    DRAFT = "DRAFT"
    ACCEPTED = "ACCEPTED"
    POLICY_DENIED = "POLICY_DENIED"
    READY_FOR_RUN = "READY_FOR_RUN"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    ARCHIVED = "ARCHIVED"


class RunStatus(StrEnum):
    CREATED = "CREATED"
    QUEUED = "QUEUED"
    LEASED = "LEASED"
    PREPARING_WORKSPACE = "PREPARING_WORKSPACE"
    RUNNING_AGENT = "RUNNING_AGENT"
    VERIFYING = "VERIFYING"
    JUDGING = "JUDGING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"
    NEEDS_APPROVAL = "NEEDS_APPROVAL"


class AttemptStatus(StrEnum):
    STARTING = "STARTING"
    ACTIVE = "ACTIVE"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    LEASE_EXPIRED = "LEASE_EXPIRED"
    CANCELLED = "CANCELLED"


class StepType(StrEnum):
    PREPARE_WORKSPACE = "PREPARE_WORKSPACE"
    CLONE_REPOSITORY = "CLONE_REPOSITORY"
    LOAD_CONTEXT = "LOAD_CONTEXT"
    MODEL_PLANNING = "MODEL_PLANNING"
    TOOL_CALL = "TOOL_CALL"
    APPLY_PATCH = "APPLY_PATCH"
    RUN_VERIFIER = "RUN_VERIFIER"
    SUMMARIZE_LOG = "SUMMARIZE_LOG"
    JUDGE_DIFF = "JUDGE_DIFF"
    COLLECT_ARTIFACTS = "COLLECT_ARTIFACTS"
    FINALIZE = "FINALIZE"


class StepStatus(StrEnum):
    STARTED = "STARTED"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    DENIED = "DENIED"
    TIMED_OUT = "TIMED_OUT"


class ToolDecision(StrEnum):
    ALLOWED = "ALLOWED"
    DENIED_BY_POLICY = "DENIED_BY_POLICY"
    DENIED_BY_PATH_GUARD = "DENIED_BY_PATH_GUARD"
    DENIED_BY_COMMAND_GUARD = "DENIED_BY_COMMAND_GUARD"
    DENIED_BY_BUDGET = "DENIED_BY_BUDGET"
    REQUIRES_APPROVAL = "REQUIRES_APPROVAL"


class ToolOutcome(StrEnum):
    """How a tool call ended, as the agent and the recorder see it (not the seed's step status:
    a cancelled call is its own outcome, recorded as a FAILED step with code `cancelled`)."""

    OK = "ok"
    FAILED = "failed"
    DENIED = "denied"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"


class ArtifactType(StrEnum):
    PATCH_UNIFIED_DIFF = "PATCH_UNIFIED_DIFF"
    PATCH_SUMMARY = "PATCH_SUMMARY"
    TOUCHED_FILES = "TOUCHED_FILES"
    COMMAND_LOG = "COMMAND_LOG"
    TEST_REPORT = "TEST_REPORT"
    BUILD_REPORT = "BUILD_REPORT"
    STATIC_ANALYSIS_REPORT = "STATIC_ANALYSIS_REPORT"
    MODEL_TRANSCRIPT_SUMMARY = "MODEL_TRANSCRIPT_SUMMARY"
    VERIFIER_REPORT = "VERIFIER_REPORT"
    JUDGE_REPORT = "JUDGE_REPORT"
    COST_REPORT = "COST_REPORT"
    FAILURE_REPORT = "FAILURE_REPORT"
    PR_BODY_DRAFT = "PR_BODY_DRAFT"


class ArtifactVisibility(StrEnum):
    """Ordered from most to least restricted; see `visibility_rank`."""

    INTERNAL_ONLY = "INTERNAL_ONLY"
    VISIBLE_TO_REQUESTER = "VISIBLE_TO_REQUESTER"
    SAFE_FOR_PR = "SAFE_FOR_PR"
    SAFE_FOR_PUBLIC_LOG = "SAFE_FOR_PUBLIC_LOG"


class RedactionStatus(StrEnum):
    """Whether an artifact's bytes were scanned for secrets before storing.

    Only REDACTED or CLEAN content may be marked safer than INTERNAL_ONLY.
    """

    RAW = "RAW"
    REDACTED = "REDACTED"
    CLEAN = "CLEAN"


class ChangeType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    RENAMED = "RENAMED"
    COPIED = "COPIED"


class PatchApplyStatus(StrEnum):
    APPLIES_CLEANLY = "APPLIES_CLEANLY"
    DOES_NOT_APPLY = "DOES_NOT_APPLY"
    NOT_CHECKED = "NOT_CHECKED"


class VerificationStatus(StrEnum):
    NOT_RUN = "NOT_RUN"
    PASSED = "PASSED"
    FAILED = "FAILED"
    PARTIAL = "PARTIAL"
    TIMED_OUT = "TIMED_OUT"
    INFRA_FAILURE = "INFRA_FAILURE"
    SKIPPED_BY_POLICY = "SKIPPED_BY_POLICY"


class VerificationCheckStatus(StrEnum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    TIMED_OUT = "TIMED_OUT"
    INFRA_FAILURE = "INFRA_FAILURE"
    SKIPPED = "SKIPPED"
    CANCELLED = "CANCELLED"  # stopped by a person: neither the code's fault nor the machine's


class JudgeStatus(StrEnum):
    NOT_RUN = "NOT_RUN"
    PASSED = "PASSED"
    PASSED_WITH_WARNINGS = "PASSED_WITH_WARNINGS"
    FAILED = "FAILED"
    NEEDS_HUMAN_REVIEW = "NEEDS_HUMAN_REVIEW"
    INCONCLUSIVE = "INCONCLUSIVE"


class Severity(StrEnum):
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"
    CRITICAL = "CRITICAL"


class VerdictStatus(StrEnum):
    SUCCESS = "SUCCESS"
    SUCCESS_NEEDS_REVIEW = "SUCCESS_NEEDS_REVIEW"
    FAILED_AGENT_COULD_NOT_COMPLETE = "FAILED_AGENT_COULD_NOT_COMPLETE"
    FAILED_VERIFICATION = "FAILED_VERIFICATION"
    FAILED_POLICY = "FAILED_POLICY"
    FAILED_INFRASTRUCTURE = "FAILED_INFRASTRUCTURE"
    CANCELLED = "CANCELLED"
    INCONCLUSIVE = "INCONCLUSIVE"


class PrEligibility(StrEnum):
    ELIGIBLE_FOR_AUTO_PR = "ELIGIBLE_FOR_AUTO_PR"
    ELIGIBLE_AFTER_HUMAN_APPROVAL = "ELIGIBLE_AFTER_HUMAN_APPROVAL"
    DRAFT_ONLY = "DRAFT_ONLY"
    NOT_ELIGIBLE = "NOT_ELIGIBLE"


class ApprovalDecision(StrEnum):
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"


class TaskType(StrEnum):
    DEPENDENCY_UPGRADE = "dependency_upgrade"
    API_MIGRATION = "api_migration"
    BUG_FIX = "bug_fix"
    REFACTOR = "refactor"
    TEST_FIX = "test_fix"
    LINT_FIX = "lint_fix"
    DOCS = "docs"
    CUSTOM = "custom"


class AutonomyLevel(StrEnum):
    """Ordered from least to most autonomous; see `autonomy_rank`."""

    DRY_RUN = "dry_run"
    DRAFT_PR = "draft_pr"
    SUPERVISED_PR = "supervised_pr"
    AUTO_PR = "auto_pr"


class TaskSource(StrEnum):
    CLI = "cli"
    FILE = "file"
    SESSION = "session"
    API = "api"


class SessionStatus(StrEnum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"


class MessageRole(StrEnum):
    USER = "user"
    SYSTEM = "system"
    AGENT = "agent"


class EventType(StrEnum):
    TASK_SUBMITTED = "TaskSubmitted"
    TASK_ACCEPTED = "TaskAccepted"
    TASK_POLICY_DENIED = "TaskPolicyDenied"
    TASK_CANCELLED = "TaskCancelled"
    SESSION_STARTED = "SessionStarted"
    SESSION_MESSAGE_ADDED = "SessionMessageAdded"
    RUN_CREATED = "RunCreated"
    RUN_QUEUED = "RunQueued"
    LEASE_ACQUIRED = "LeaseAcquired"
    LEASE_EXPIRED = "LeaseExpired"
    ATTEMPT_STARTED = "AttemptStarted"
    ATTEMPT_FAILED = "AttemptFailed"
    WORKSPACE_PREPARED = "WorkspacePrepared"
    STEP_STARTED = "StepStarted"
    STEP_COMPLETED = "StepCompleted"
    TOOL_CALL_REQUESTED = "ToolCallRequested"
    TOOL_CALL_DENIED = "ToolCallDenied"
    TOOL_CALL_COMPLETED = "ToolCallCompleted"
    PATCH_PRODUCED = "PatchProduced"
    VERIFIER_STARTED = "VerifierStarted"
    VERIFIER_COMPLETED = "VerifierCompleted"
    JUDGE_COMPLETED = "JudgeCompleted"
    VERDICT_DECIDED = "VerdictDecided"
    APPROVAL_RECORDED = "ApprovalRecorded"
    PR_REQUESTED = "PrRequested"
    PR_CREATED = "PrCreated"
    PR_UPDATED = "PrUpdated"
    PR_FAILED = "PrFailed"
    PR_STATE_CHANGED = "PrStateChanged"
    RUN_COMPLETED = "RunCompleted"
    RUN_CANCELLED = "RunCancelled"
    TRACE_EXPORTED = "TraceExported"  # a run's trace sent over OTLP, with what was dropped


_AUTONOMY_ORDER = list(AutonomyLevel)
_VISIBILITY_ORDER = list(ArtifactVisibility)


def autonomy_rank(level: AutonomyLevel) -> int:
    return _AUTONOMY_ORDER.index(level)


def visibility_rank(visibility: ArtifactVisibility) -> int:
    return _VISIBILITY_ORDER.index(visibility)


def choices(enum: type[StrEnum]) -> str:
    """The valid values of an enum, for error messages that list them."""
    return ", ".join(member.value for member in enum)


class Forge(StrEnum):
    """Where `pr create` opens the pull request: `auto` reads it from the remote's URL; `none`
    only pushes the branch."""

    AUTO = "auto"
    GITHUB = "github"
    GITLAB = "gitlab"
    NONE = "none"


class PrState(StrEnum):
    """A pull request as its forge last reported it; BRANCH when no forge holds one."""

    BRANCH = "BRANCH"
    OPEN = "OPEN"
    MERGED = "MERGED"
    CLOSED = "CLOSED"


class TestOutcome(StrEnum):
    """One test's result in one run of a runner (JUnit's vocabulary)."""

    __test__ = False  # not a pytest test class, whatever its name says
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"


class TestClassification(StrEnum):
    """A test (or a whole check) on the patch compared with the base commit: SWE-bench's words;
    FLAKY for one whose result changed between runs of the same code (on the base too);
    PASS_TO_MISSING for one that passed on the base and did not run with the patch;
    PASS_TO_FLAKY for one that passed every base run and changes result with the patch."""

    __test__ = False
    FAIL_TO_PASS = "FAIL_TO_PASS"
    PASS_TO_PASS = "PASS_TO_PASS"
    PASS_TO_FAIL = "PASS_TO_FAIL"
    FAIL_TO_FAIL = "FAIL_TO_FAIL"
    FLAKY = "FLAKY"
    PASS_TO_MISSING = "PASS_TO_MISSING"
    PASS_TO_FLAKY = "PASS_TO_FLAKY"


class BaselineMode(StrEnum):
    """When the plan also runs on the base commit: `auto` when a required check fails or the
    task is a fix, `always`, or `never`."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


plain_values(globals().values())  # the speed-up of reading `.value`
