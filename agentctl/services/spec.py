"""Freezing a task and the project config into the ExecutionSpec a run executes under."""

from __future__ import annotations

import re
import shlex

from agentctl.config import Config
from agentctl.domain.enums import TaskType
from agentctl.domain.run import (
    Budget,
    CommandRules,
    ExecutionSpec,
    JudgePolicy,
    PatchBoundary,
    PlannedCheck,
    ToolPolicy,
    VerificationPlan,
)
from agentctl.domain.task import Task


def build_spec(task: Task, config: Config, *, base_commit: str, agent: str,
               agent_digest: str | None) -> ExecutionSpec:
    """The task's scope narrows config's: its forbidden paths and checks are added, never removed."""
    forbidden = tuple(dict.fromkeys((*config.strings("boundary.forbidden"), *task.forbidden_paths)))
    return ExecutionSpec(
        repository=task.repository or "",
        base_ref=task.base_ref,
        base_commit=base_commit,
        task_type=task.task_type,
        instruction=task.instruction,
        autonomy_level=task.autonomy_level,
        agent=agent,
        agent_digest=agent_digest,
        patch_boundary=PatchBoundary(
            allowed_paths=task.allowed_paths or config.strings("boundary.allowed"),
            forbidden_paths=forbidden,
            lockfile_patterns=config.strings("boundary.lockfiles"),
            generated_patterns=config.strings("boundary.generated"),
            allow_lockfile_changes=config.flag("boundary.allow_lockfile_changes")
            or task.task_type is TaskType.DEPENDENCY_UPGRADE,
            allow_generated_changes=config.flag("boundary.allow_generated_changes"),
        ),
        tool_policy=ToolPolicy(
            commands=CommandRules(
                deny=config.strings("tools.commands.deny"),
                ask=config.strings("tools.commands.ask"),
                allow=config.strings("tools.commands.allow"),
            ),
            allow_shell=config.flag("tools.allow_shell"),
            secret_files=config.strings("tools.secret_files"),
            env_allowlist=config.strings("env.allowlist"),
            env_passthrough=config.strings("env.passthrough"),
            max_result_bytes=config.integer("tools.max_result_bytes"),
        ),
        verification_plan=VerificationPlan(
            checks=_checks(config, task),
            infra_patterns=config.strings("verification.infra_patterns"),
        ),
        budget=Budget(
            max_attempts=config.integer("budget.max_attempts"),
            wall_seconds=config.number("budget.wall_seconds"),
            max_tool_calls=config.integer("budget.max_tool_calls"),
            max_output_bytes=config.integer("budget.max_output_bytes"),
            backoff_initial_seconds=config.number("budget.backoff_initial_seconds"),
            backoff_max_seconds=config.number("budget.backoff_max_seconds"),
        ),
        judge_policy=JudgePolicy(
            strict=config.flag("judge.strict"),
            min_confidence=config.number("judge.min_confidence"),
            command=config.text("judge.command") or None,
            timeout_seconds=config.number("judge.timeout_seconds"),
            max_diff_lines=config.integer("judge.max_diff_lines"),
            production_config_patterns=config.strings("judge.production_config"),
        ),
    )


def _checks(config: Config, task: Task) -> tuple[PlannedCheck, ...]:
    default_timeout = config.number("verification.timeout_seconds")
    entries = [dict(entry) for entry in config.checks()]
    known = {entry["command"] for entry in entries}
    entries += [{"command": command} for command in task.verification_commands
                if command not in known]
    checks: list[PlannedCheck] = []
    names: set[str] = set()
    for entry in entries:
        command = str(entry["command"])
        name = _unique(str(entry.get("name") or check_name(command)), names)
        junit = entry.get("junit_xml")
        checks.append(PlannedCheck(
            name=name, command=command, required=bool(entry.get("required", True)),
            timeout_seconds=float(entry.get("timeout_seconds", default_timeout)),  # type: ignore[arg-type]
            junit_xml=str(junit) if junit else None,
        ))
    return tuple(checks)


def check_name(command: str) -> str:
    """`mvn -q test` -> `mvn-test`, as the seed names its log `mvn-test.log`."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    kept = [re.sub(r"[^A-Za-z0-9_.-]", "", w.rsplit("/", 1)[-1]) for w in words
            if not w.startswith("-") and "=" not in w]
    return "-".join(w for w in kept if w)[:40].strip("-.") or "check"


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}-{n}", n + 1
    taken.add(candidate)
    return candidate
