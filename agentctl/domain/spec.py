"""The policy a run executes under, frozen at creation: what it may change and run, how it is
verified and judged, its budget. Value objects only: they know nothing of runs or verdicts, so
the patch, judge and verdict rules can read them without importing the run's lifecycle."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from agentctl.domain.agent import (
    GUARD_HOLD_SECONDS,
    AgentSpec,
    CommandGateway,
    NativeAgentSettings,
)
from agentctl.domain.canonical import record_digest
from agentctl.domain.enums import AutonomyLevel, BaselineMode, TaskType
from agentctl.domain.errors import InvariantViolation
from agentctl.domain.sandbox import SandboxProfile


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchBoundary:
    allowed_paths: tuple[str, ...]
    forbidden_paths: tuple[str, ...]
    lockfile_patterns: tuple[str, ...]
    generated_patterns: tuple[str, ...]
    allow_lockfile_changes: bool = False
    allow_generated_changes: bool = False
    ignore_generated: tuple[str, ...] = ()  # new files tools leave: kept out of the patch
    allow_binary: tuple[str, ...] = ()  # binary files the patch may hold


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRules:
    """Command lines split shell-style; a trailing `*` matches any further arguments."""

    deny: tuple[str, ...]
    ask: tuple[str, ...]
    allow: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPolicy:
    commands: CommandRules
    allow_shell: bool
    secret_files: tuple[str, ...]
    env_allowlist: tuple[str, ...]
    env_passthrough: tuple[str, ...]
    max_result_bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedCheck:
    name: str
    command: str
    required: bool = True
    timeout_seconds: float = 600.0
    junit_xml: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationPlan:
    checks: tuple[PlannedCheck, ...]
    infra_patterns: tuple[str, ...]
    baseline: BaselineMode = BaselineMode.ALWAYS
    reruns: int = 2
    allow_preexisting_failures: bool = True
    must_pass: tuple[str, ...] = ()  # the task's tests that must pass (runner ids)
    allow_removed_tests: bool = False  # the task's: tests passing on the base may vanish
    test_patch: str | None = None  # the task's test patch (a diff), judged in its stead
    # the patch's test side (`test_side`): its files run only beside the other side's base
    test_paths: tuple[str, ...] = ()
    blame_runs: int = 5  # clean base runs it takes to blame the patch for a flaky test


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    max_attempts: int
    wall_seconds: float
    max_tool_calls: int
    max_output_bytes: int
    backoff_initial_seconds: float
    backoff_max_seconds: float
    max_cost_usd: float | None = None  # what a native agent reports spending; None: no bound
    max_tokens: int | None = None  # input + output tokens a native agent reports
    # `[gateway] timeout_seconds`: a model request unanswered this long is given up on
    model_timeout_seconds: float = 600.0
    # `[gateway] guard_hold_seconds`: how long a model request waits for the guard to arm
    guard_hold_seconds: float = GUARD_HOLD_SECONDS

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise InvariantViolation("budget.max_attempts must be at least 1")

    def backoff_before(self, attempt_number: int) -> timedelta:
        """Exponential backoff before `attempt_number` (2, 3, ...), capped."""
        if attempt_number <= 1 or self.backoff_initial_seconds <= 0:
            return timedelta(0)
        seconds = self.backoff_initial_seconds * 2 ** (attempt_number - 2)
        return timedelta(seconds=min(seconds, self.backoff_max_seconds))


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgePolicy:
    strict: bool
    min_confidence: float
    command: str | None
    timeout_seconds: float
    max_diff_lines: int
    production_config_patterns: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionSpec:
    """Everything that governs a run, frozen at creation; its digest is stamped on the evidence.

    The seed's record also names the run id; it is left out here so that two runs under the same
    policy share one digest and anyone can see they were governed alike.
    """

    repository: str
    base_ref: str
    base_commit: str
    task_type: TaskType
    instruction: str
    autonomy_level: AutonomyLevel
    agent: str
    agent_digest: str | None
    patch_boundary: PatchBoundary
    tool_policy: ToolPolicy
    verification_plan: VerificationPlan
    budget: Budget
    judge_policy: JudgePolicy
    sandbox: SandboxProfile = SandboxProfile()
    agent_settings: NativeAgentSettings | None = None  # claude/codex: how the CLI is launched
    command_gateway: CommandGateway | None = None  # command: its model through the gateway

    @property
    def agent_spec(self) -> AgentSpec:
        return AgentSpec.frozen(self.agent, self.agent_digest)

    def digest(self) -> str:
        """Computed once, when the run is created, and stamped on it (runs created before the
        one canonical form carry a digest of their spec's ASCII-escaped JSON)."""
        return record_digest(self)
