"""The run's patch: file changes, deterministic stats, and the boundary check every PR depends on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentctl.domain import globs
from agentctl.domain.agent_text import control_character, visible
from agentctl.domain.enums import ChangeType, PatchApplyStatus
from agentctl.domain.serialize import LATER_UNMARKED
from agentctl.domain.spec import PatchBoundary

# Test files by the conventions of the common ecosystems; not configurable because the judge's
# "tests deleted" rule must not be switched off by the project under review.
TEST_FILE_PATTERNS = (
    "test/**", "tests/**", "src/test/**", "**/test/**", "**/tests/**", "**/__tests__/**",
    "test_*.py", "*_test.py", "*_test.go", "*Test.java", "*Tests.java", "*IT.java",
    "*.test.js", "*.test.ts", "*.spec.js", "*.spec.ts", "*_spec.rb",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    path: str
    change_type: ChangeType
    additions: int
    deletions: int
    generated: bool
    binary: bool
    lockfile: bool
    test_file: bool
    forbidden_by_policy: bool
    old_path: str | None = None
    link_target: str | None = None  # a symbolic link's target, workspace-relative when inside

    def touched_paths(self) -> tuple[str, ...]:
        """Both sides of a rename or copy: moving a file out of bounds is touching both."""
        if self.old_path and self.old_path != self.path:
            return (self.old_path, self.path)
        return (self.path,)


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchStats:
    files_changed: int
    additions: int
    deletions: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchBoundaryCheck:
    passed: bool
    allowed_path_violations: tuple[str, ...]
    forbidden_path_violations: tuple[str, ...]
    unexpected_generated_files: tuple[str, ...]
    unexpected_lockfile_changes: tuple[str, ...]
    matched_rules: Mapping[str, str] = field(default_factory=dict)  # path -> rule
    # binaries no [boundary] allow_binary names
    unexpected_binary_files: tuple[str, ...] = field(default=(), metadata=LATER_UNMARKED)

    def forbidden_rule(self, *paths: str) -> str | None:
        """The rule that forbade the first of `paths` (a file's path, a rename's old one) this
        check names, None when it names neither: which edit broke the boundary."""
        for path in paths:
            if path in self.forbidden_path_violations:
                return self.matched_rules.get(path, "forbidden")
        return None

    def reasons(self) -> list[str]:
        """One line each, paths with their control characters spelled out."""
        out = [
            f"patch touches forbidden path {visible(path)} "
            f"({visible(self.matched_rules.get(path, 'forbidden'))})"
            for path in self.forbidden_path_violations
        ]
        out += [f"patch touches {visible(path)}, outside the allowed paths" for path in
                self.allowed_path_violations]
        out += [f"unexpected generated file {visible(path)}"
                for path in self.unexpected_generated_files]
        out += [f"unexpected lockfile change {visible(path)}"
                for path in self.unexpected_lockfile_changes]
        out += [f"unexpected binary file {visible(path)} (a binary the patch may hold is named "
                "in [boundary] allow_binary)" for path in self.unexpected_binary_files]
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Patch:
    patch_id: str
    run_id: str
    attempt_id: str
    base_commit: str
    unified_diff_artifact: str
    file_changes: tuple[FileChange, ...]
    stats: PatchStats
    boundary_check: PatchBoundaryCheck
    apply_status: PatchApplyStatus
    created_at: datetime
    apply_error: str | None = None
    tree_id: str | None = None  # the git tree base + patch gives: what is verified and committed


def classify(
    path: str, change_type: ChangeType, additions: int, deletions: int, *, binary: bool,
    boundary: PatchBoundary, old_path: str | None = None, link_target: str | None = None,
) -> FileChange:
    touched = (old_path, path) if old_path and old_path != path else (path,)
    return FileChange(
        path=path,
        old_path=old_path if old_path != path else None,
        change_type=change_type,
        additions=additions,
        deletions=deletions,
        binary=binary,
        generated=globs.first_match(boundary.generated_patterns, path) is not None,
        lockfile=globs.first_match(boundary.lockfile_patterns, path) is not None,
        test_file=any(globs.first_match(TEST_FILE_PATTERNS, p) for p in touched),
        forbidden_by_policy=any(globs.first_match(boundary.forbidden_paths, p)
                                or control_character(p) for p in touched),
        link_target=link_target,
    )


def ignored_generated(paths: Iterable[str], boundary: PatchBoundary) -> tuple[str, ...]:
    """The new files among `paths` that tools left behind ([boundary] ignore_generated): they
    are kept out of the patch, listed as excluded."""
    return tuple(p for p in paths if globs.first_match(boundary.ignore_generated, p) is not None)


def compute_stats(changes: Sequence[FileChange]) -> PatchStats:
    return PatchStats(
        files_changed=len(changes),
        additions=sum(change.additions for change in changes),
        deletions=sum(change.deletions for change in changes),
    )


def check_boundary(changes: Iterable[FileChange], boundary: PatchBoundary) -> PatchBoundaryCheck:
    """Every path a change touches must be allowed (if an allow-list is given), not forbidden,
    and free of control characters."""
    forbidden: list[str] = []
    outside: list[str] = []
    generated: list[str] = []
    lockfiles: list[str] = []
    binaries: list[str] = []
    rules: dict[str, str] = {}
    for change in changes:
        escape = link_escape(change, boundary)
        if escape is not None:
            _add(forbidden, change.path)
            rules[change.path] = escape
        for path in change.touched_paths():
            character = control_character(path)
            rule = globs.first_match(boundary.forbidden_paths, path)
            if character is not None:  # a name that could rewrite the PR body showing it
                _add(forbidden, path)
                rules[path] = f"control character: {character} in the path"
            elif rule is not None:
                _add(forbidden, path)
                rules[path] = f"forbidden: {rule}"
            elif boundary.allowed_paths and globs.first_match(boundary.allowed_paths, path) is None:
                _add(outside, path)
        if change.generated and not boundary.allow_generated_changes:
            _add(generated, change.path)
        if change.lockfile and not boundary.allow_lockfile_changes:
            _add(lockfiles, change.path)
        if change.binary and change.change_type is not ChangeType.DELETED \
                and not change.generated and not change.lockfile \
                and globs.first_match(boundary.allow_binary, change.path) is None:
            _add(binaries, change.path)
    return PatchBoundaryCheck(
        passed=not (forbidden or outside or generated or lockfiles or binaries),
        allowed_path_violations=tuple(outside),
        forbidden_path_violations=tuple(forbidden),
        unexpected_generated_files=tuple(generated),
        unexpected_lockfile_changes=tuple(lockfiles),
        matched_rules=rules,
        unexpected_binary_files=tuple(binaries),
    )


def link_escape(change: FileChange, boundary: PatchBoundary) -> str | None:
    """Why a symbolic link in the patch breaks the boundary: a target outside the workspace
    (absolute, or climbing out), inside `.git`, or in a forbidden path. None when it does not."""
    target = change.link_target
    if target is None or change.change_type is ChangeType.DELETED:
        return None
    if target.startswith("/") or target == ".." or target.startswith("../"):
        return f"symlink: {change.path} points outside the workspace ({target})"
    if any(part.lower() == ".git" for part in target.split("/")):
        return f"symlink: {change.path} points into .git ({target})"
    rule = globs.first_match(boundary.forbidden_paths, target)
    if rule is not None:
        return f"symlink: {change.path} points into forbidden {rule} ({target})"
    return None


def _add(items: list[str], path: str) -> None:
    if path not in items:
        items.append(path)
