"""Judge rules that read the diff and the evidence against the task's type: a fix should show
in a test, and only a dependency upgrade should touch what the project depends on."""

from __future__ import annotations

from collections.abc import Sequence

from agentctl.domain import globs
from agentctl.domain.baseline import FIX_TASKS
from agentctl.domain.enums import Severity, TaskType, TestClassification
from agentctl.domain.findings import JudgeFinding
from agentctl.domain.patch import FileChange
from agentctl.domain.verification import VerificationReport

# Dependency manifests and lockfiles of the common ecosystems, anywhere in the tree.
DEPENDENCY_FILES = (
    "**/pyproject.toml", "**/setup.py", "**/setup.cfg", "**/requirements*.txt", "**/requirements/*.txt",
    "**/Pipfile", "**/Pipfile.lock", "**/poetry.lock", "**/uv.lock", "**/environment.yml",
    "**/pom.xml", "**/build.gradle", "**/build.gradle.kts", "**/gradle.lockfile",
    "**/package.json", "**/package-lock.json", "**/yarn.lock", "**/pnpm-lock.yaml",
    "**/go.mod", "**/go.sum", "**/Cargo.toml", "**/Cargo.lock", "**/Gemfile", "**/Gemfile.lock",
    "**/composer.json", "**/composer.lock", "**/*.csproj", "**/packages.config",
)


def intent_findings(task_type: TaskType | None, changes: Sequence[FileChange],
                    verification: VerificationReport | None) -> list[JudgeFinding]:
    out: list[JudgeFinding] = []
    if task_type is not None and task_type is not TaskType.DEPENDENCY_UPGRADE:
        for change in changes:
            for path in dict.fromkeys(p for p in (change.path, change.old_path) if p):
                if globs.first_match(DEPENDENCY_FILES, path) is not None:
                    out.append(JudgeFinding(
                        severity=Severity.WARNING, category="dependency-change", file_path=path,
                        message=f"dependency file {path} changed in a {task_type.value} task; "
                                "only a dependency_upgrade is expected to change dependencies"))
    if task_type in FIX_TASKS and verification is not None and _baseline_ran(verification) \
            and not _fix_shown(verification):
        base = next(c.baseline_commit for c in verification.checks if c.baseline_commit)
        out.append(JudgeFinding(
            severity=Severity.WARNING, category="no-fix-shown",
            message=f"no test shows the fix: none fails on base {str(base)[:12]} and passes "
                    "with the patch"))
    return out


def _baseline_ran(report: VerificationReport) -> bool:
    return any(c.baseline_commit for c in report.checks)


def _fix_shown(report: VerificationReport) -> bool:
    fixed = TestClassification.FAIL_TO_PASS
    return any(c.classification is fixed or any(t.classification is fixed
                                                for t in c.classified_tests)
               for c in report.checks)
