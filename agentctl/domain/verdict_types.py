"""What the verdict reads and the chain it writes: apart from the decision, so the rules that
contribute links (the baseline's) can name them without importing the verdict."""

from __future__ import annotations

from dataclasses import dataclass

from agentctl.domain.enums import AutonomyLevel
from agentctl.domain.judge import JudgeReport
from agentctl.domain.patch import Patch
from agentctl.domain.spec import JudgePolicy
from agentctl.domain.verification import VerificationReport


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainLink:
    check: str
    passed: bool
    detail: str
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """Artifact ids grouped by the link of the chain they support."""

    patch: tuple[str, ...] = ()
    verification: tuple[str, ...] = ()
    judge: tuple[str, ...] = ()
    failure: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Intent:
    """What the task asked the checks to show, frozen in its spec: a fix (`fix`: bug_fix or
    test_fix), tests that must pass (`must_pass`, SWE-bench's FAIL_TO_PASS list), and whether
    tests may go (`allow_removed_tests`, for a task whose point is removing them)."""

    fix: bool = False
    must_pass: tuple[str, ...] = ()
    allow_removed_tests: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class VerdictInputs:
    autonomy: AutonomyLevel
    evidence: Evidence
    judge_policy: JudgePolicy | None = None  # needed once a patch is judged
    patch: Patch | None = None
    verification: VerificationReport | None = None
    judge: JudgeReport | None = None
    agent_error: str | None = None
    infrastructure_failure: str | None = None
    cancelled: str | None = None
    allow_preexisting_failures: bool = True  # [verification] allow_preexisting_failures
    intent: Intent = Intent()  # what the task asked the checks to show
    sandbox_off: str | None = None  # why the run's processes were not sandboxed, if they were not
    unattributed: tuple[str, ...] = ()  # patched files no recorded call changed
