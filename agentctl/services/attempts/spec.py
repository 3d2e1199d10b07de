"""Freezing a task and the project config into the ExecutionSpec a run executes under."""

from __future__ import annotations

import re
import shlex

from agentctl.config import Config
from agentctl.config.schema import CheckSettings, CopilotSettings, GeminiSettings, OpencodeSettings
from agentctl.domain.agent import (
    AgentKind,
    AgentSpec,
    CommandGateway,
    ModelApi,
    NativeAgentSettings,
)
from agentctl.domain.enums import TaskType
from agentctl.domain.errors import BadInput
from agentctl.domain.provider_model import DEFAULT_MODEL, provider_model
from agentctl.domain.sandbox import SandboxLimits, SandboxProfile
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
from agentctl.domain.task import Task
from agentctl.domain.test_side import frozen_test_paths


def build_spec(task: Task, config: Config, *, base_commit: str, agent: str,
               agent_digest: str | None) -> ExecutionSpec:
    """The task's scope narrows config's: its forbidden paths and checks are added, never removed."""
    forbidden = tuple(dict.fromkeys((*config.boundary.forbidden, *task.forbidden_paths)))
    checks = _checks(config, task)
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
            allowed_paths=task.allowed_paths or config.boundary.allowed,
            forbidden_paths=forbidden,
            lockfile_patterns=config.boundary.lockfiles,
            generated_patterns=config.boundary.generated,
            allow_lockfile_changes=config.boundary.allow_lockfile_changes
            or task.task_type is TaskType.DEPENDENCY_UPGRADE,
            allow_generated_changes=config.boundary.allow_generated_changes,
            ignore_generated=config.boundary.ignore_generated,
            allow_binary=config.boundary.allow_binary,
        ),
        tool_policy=ToolPolicy(
            commands=CommandRules(
                deny=config.tools.commands.deny,
                ask=config.tools.commands.ask,
                allow=config.tools.commands.allow,
            ),
            allow_shell=config.tools.allow_shell,
            secret_files=config.tools.secret_files,
            env_allowlist=config.env.allowlist,
            env_passthrough=config.env.passthrough,
            max_result_bytes=config.tools.max_result_bytes,
        ),
        verification_plan=VerificationPlan(
            checks=checks,
            infra_patterns=config.verification.infra_patterns,
            baseline=config.verification.baseline,
            reruns=config.verification.reruns,
            allow_preexisting_failures=config.verification.allow_preexisting_failures,
            must_pass=task.must_pass,
            allow_removed_tests=task.allow_removed_tests,
            test_patch=task.test_patch,
            blame_runs=config.verification.flaky_blame_runs,
            test_paths=frozen_test_paths(config.verification.test_paths,
                                      (c.command for c in checks)),
        ),
        budget=Budget(
            max_attempts=config.budget.max_attempts,
            wall_seconds=config.budget.wall_seconds,
            max_tool_calls=config.budget.max_tool_calls,
            max_output_bytes=config.budget.max_output_bytes,
            backoff_initial_seconds=config.budget.backoff_initial_seconds,
            backoff_max_seconds=config.budget.backoff_max_seconds,
            max_cost_usd=config.budget.max_cost_usd or None,
            max_tokens=config.budget.max_tokens or None,
            model_timeout_seconds=config.gateway.timeout_seconds,
            guard_hold_seconds=config.gateway.guard_hold_seconds,
        ),
        judge_policy=JudgePolicy(
            strict=config.judge.strict,
            min_confidence=config.judge.min_confidence,
            command=config.judge.command or None,
            timeout_seconds=config.judge.timeout_seconds,
            max_diff_lines=config.judge.max_diff_lines,
            production_config_patterns=config.judge.production_config,
        ),
        agent_settings=native_settings(config, AgentSpec.frozen(agent, agent_digest)),
        command_gateway=command_gateway(config, AgentSpec.frozen(agent, agent_digest)),
        sandbox=_sandbox(config),
    )


def _sandbox(config: Config) -> SandboxProfile:
    settings = config.sandbox
    return SandboxProfile(
        mode=settings.mode, read_only=settings.read_only, writable=settings.writable,
        network_allow=settings.network.allow,
        limits=SandboxLimits(max_processes=settings.max_processes,
                             max_memory_mb=settings.max_memory_mb,
                             max_file_size_mb=settings.max_file_size_mb),
    )


def native_settings(config: Config, agent: AgentSpec) -> NativeAgentSettings | None:
    """`[agents.NAME]` frozen for a native agent; the spec's model wins over config's."""
    if agent.kind is AgentKind.CLAUDE:
        claude = config.agents.claude
        return NativeAgentSettings(command=claude.command, model=agent.value or claude.model,
                                   max_turns=claude.max_turns, extra_args=claude.extra_args,
                                   mcp=claude.mcp, prices=claude.prices)
    if agent.kind is AgentKind.CODEX:
        codex = config.agents.codex
        return NativeAgentSettings(command=codex.command, model=agent.value or codex.model,
                                   extra_args=codex.extra_args, base_url=codex.base_url,
                                   env_key=codex.env_key, mcp=codex.mcp,
                                   prices=codex.prices)
    # the CLIs whose table is command, model, max_turns, extra_args and prices alone
    clis: dict[AgentKind, CopilotSettings | GeminiSettings | OpencodeSettings] = {
        AgentKind.COPILOT: config.agents.copilot, AgentKind.GEMINI: config.agents.gemini,
        AgentKind.OPENCODE: config.agents.opencode}
    cli = clis.get(agent.kind)
    if cli is None:
        return None
    model = agent.value or cli.model
    return NativeAgentSettings(
        command=cli.command, max_turns=cli.max_turns, extra_args=cli.extra_args,
        model=opencode_model(model) if agent.kind is AgentKind.OPENCODE else model,
        prices=cli.prices)


def opencode_model(text: str) -> str:
    """`PROVIDER/MODEL` checked (`[agents.opencode] model` is read here first), the default
    when empty; BadInput otherwise."""
    try:
        provider_model(text)
    except ValueError as error:
        raise BadInput(f"[agents.opencode] model: {error}; expected PROVIDER/MODEL") from None
    return text or DEFAULT_MODEL


def command_gateway(config: Config, agent: AgentSpec) -> CommandGateway | None:
    """`[agents.command]` frozen for a `command:` agent whose model is reached through the
    gateway; None for any other agent, or without `gateway`."""
    settings = config.agents.command
    if agent.kind is not AgentKind.COMMAND or settings.gateway is ModelApi.NONE:
        return None
    return CommandGateway(api=settings.gateway, prices=settings.prices)


def _checks(config: Config, task: Task) -> tuple[PlannedCheck, ...]:
    """Config's checks, then the task's commands that config does not already run."""
    settings = config.verification
    entries = list(settings.commands)
    known = {entry.command for entry in entries}
    entries += [CheckSettings(command=command) for command in task.verification_commands
                if command not in known]
    checks: list[PlannedCheck] = []
    names: set[str] = set()
    for entry in entries:
        checks.append(PlannedCheck(
            name=_unique(entry.name or check_name(entry.command), names), command=entry.command,
            required=entry.required,
            timeout_seconds=entry.timeout_seconds or settings.timeout_seconds,
            junit_xml=entry.junit_xml or None,
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
    return _cut("-".join(w for w in kept if w), 40).strip("-.") or "check"


def _cut(name: str, limit: int) -> str:
    """At most `limit` characters, cut after a whole word (`-`) where one fits."""
    if len(name) <= limit:
        return name
    head = name[: limit + 1]
    return head[: head.rfind("-")] if "-" in head[1:] else name[:limit]


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}-{n}", n + 1
    taken.add(candidate)
    return candidate
