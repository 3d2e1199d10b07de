"""`agentctl demo`: the seed's four scenarios on a bundled sample service, through the real
pipeline — tasks, runs, attempts, guarded tool calls, verification, judge and verdicts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from importlib.resources import as_file, files
from pathlib import Path
from typing import Protocol

from agentctl import config
from agentctl.domain.run import Run
from agentctl.domain.sandbox import SandboxMode
from agentctl.domain.task import Task
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.services.actions.requests import TaskRequest
from agentctl.services.actions.tasks import SubmitStore, SubmitWork, submit_task
from agentctl.services.attempts.pipeline import RunOptions
from agentctl.services.lifecycle.worker import InlineStore, InlineWork, create_and_run

IDENTITY = {"GIT_AUTHOR_NAME": "agentctl demo", "GIT_AUTHOR_EMAIL": "demo@agentctl.invalid",
            "GIT_COMMITTER_NAME": "agentctl demo", "GIT_COMMITTER_EMAIL": "demo@agentctl.invalid"}


class DemoWork(InlineWork, SubmitWork, Protocol):
    """A submission's transaction and a run's."""


class DemoStore(InlineStore, SubmitStore, Protocol):
    """The part of the storage port the demo uses (any `Storage` is one): submitting each
    scenario's task and running it here."""

    def unit_of_work(self) -> AbstractContextManager[DemoWork]: ...


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    task_type: str
    title: str
    instruction: str
    plan: str
    extra_checks: tuple[str, ...] = ()


SCENARIOS = (
    Scenario("migration", "api_migration", "Migrate to new_feature_flags",
             "Migrate every old_feature_flag_client.is_enabled(flag) to "
             "new_feature_flags.evaluate(flag, context) in payments-service and update the "
             "tests. Do not touch infra, deployment or workflow files.", "migrate-flags.toml"),
    Scenario("workflow edit", "api_migration", "Migrate flags (agent edits the deploy workflow)",
             "Migrate every old_feature_flag_client.is_enabled(flag) to "
             "new_feature_flags.evaluate(flag, context). Do not touch workflow files.",
             "migrate-flags-and-deploy.toml"),
    Scenario("dependency upgrade", "dependency_upgrade", "Upgrade requests to 2.32.x",
             "Upgrade requests from 2.31 to 2.32.x and fix what breaks.", "upgrade-requests.toml",
             extra_checks=("{python} scripts/check_dependencies.py",)),
    Scenario("refund rounding", "bug_fix", "Round refunds to whole units",
             "Round refund amounts down to whole currency units.", "refund-rounding.toml"),
)


@dataclass(frozen=True, slots=True)
class DemoResult:
    scenario: Scenario
    task: Task
    run: Run


def demo_python() -> str:
    """`python3` when the scrubbed PATH finds one (short commands read better), else ours."""
    return "python3" if shutil.which("python3") else sys.executable


def demo_config(python: str) -> str:
    return (
        "# Written by `agentctl demo`.\n"
        "[policy]\nmax_autonomy = \"supervised_pr\"\ndefault_autonomy = \"supervised_pr\"\n\n"
        f"[verification]\ncommands = [\"{python} -m unittest discover -s tests -t .\"]\n"
        "timeout_seconds = 120\n\n"
        "[budget]\nmax_attempts = 2\nbackoff_initial_seconds = 0\n"
    )


def prepare(root: Path) -> tuple[Path, Path, Path]:
    """The sample repository (a git work tree), the plans, and the config file, under `root`."""
    resources = files("agentctl.resources").joinpath("demo")
    with as_file(resources) as source:
        repository = root / "payments-service"
        shutil.copytree(Path(source) / "payments-service", repository)
        plans = root / "plans"
        shutil.copytree(Path(source) / "plans", plans)
    # Wheels leave dot-files out of package data, so they ship as `dot-<name>`.
    for shipped in sorted(repository.rglob("dot-*"), key=lambda p: len(p.parts), reverse=True):
        shipped.rename(shipped.with_name("." + shipped.name.removeprefix("dot-")))
    for command in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                    ["git", "commit", "-q", "-m", "payments-service: initial import"]):
        subprocess.run(command, cwd=repository, check=True, capture_output=True,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root),
                            **IDENTITY})
    settings = root / ".agentctl.toml"
    settings.write_text(demo_config(demo_python()), encoding="utf-8")
    return repository, plans, settings


def run_demo(storage: DemoStore, root: Path, *, home: Path,
             progress: Callable[[str], None] = lambda _text: None,
             sandboxed: bool = True) -> list[DemoResult]:
    """The four scenarios on `storage`, whose state home (`home`) no agent may see."""
    repository, plans, settings_path = prepare(root)
    settings = config.load(settings_path)
    if not sandboxed:
        settings = replace(settings, sandbox=replace(settings.sandbox, mode=SandboxMode.OFF))
    options = RunOptions(progress=progress,
                         redact_logs_up_to=settings.verification.redact_logs_up_to_bytes,
                         protected=(home,))
    results = []
    for scenario in SCENARIOS:
        progress(scenario.name)
        task = submit_task(storage, settings, TaskRequest(
            repository=str(repository), task_type=scenario.task_type, title=scenario.title,
            instruction=scenario.instruction, created_by="agentctl demo",
            verification_commands=tuple(c.format(python=demo_python())
                                        for c in scenario.extra_checks),
            labels={"demo": scenario.name}), cwd=root)
        agent = parse_agent_spec(f"script:{plans / scenario.plan}", root)
        final = create_and_run(storage, settings, task.task_id, agent=agent, detach=False,
                               options=options)
        results.append(DemoResult(scenario, task, final))
    return results


def new_demo_root() -> Path:
    return Path(tempfile.mkdtemp(prefix="agentctl-demo-"))
