"""The test harness: files that decide which tests run and how their results are reported.

A patch that changes one can make a failing test vanish (`addopts = --deselect ...`) or report
every test passed (a conftest hook); such a change is the project's to make, not the agent's to
make quietly. Dedicated harness files are also put back as they are on the base and the checks
run again there; a file whose test section is part of a larger one (pyproject.toml, pom.xml,
package.json) is named by the judge only, since putting it back would undo the rest of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentctl.domain import globs
from agentctl.domain.enums import ChangeType, Severity
from agentctl.domain.findings import DiffLine, JudgeFinding
from agentctl.domain.lazy_regex import lazy_regex
from agentctl.domain.patch import FileChange

# Files whose whole job is the test harness: restored to the base's for the harness rerun.
HARNESS_FILES = (
    "conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "noxfile.py", ".coveragerc",
    "jest.config.*", "vitest.config.*", "vitest.workspace.*", "karma.conf.*", ".mocharc*",
    "phpunit.xml", "phpunit.xml.dist", "jest.setup.*",
)
# Files with a test section among other things: a harness change when the diff touches it.
_SECTIONS = {
    "pyproject.toml": lazy_regex(r"pytest|addopts|testpaths|python_files|python_functions|"
                                 r"unittest|coverage|tool\.tox|nox"),
    "pom.xml": lazy_regex(r"surefire|failsafe|skipTests|testFailureIgnore|maven\.test|"
                          r"<excludes?>|<includes?>|<test>"),
    "build.gradle": lazy_regex(r"\btest\b|useJUnit|exclude|ignoreFailures|filter"),
    "build.gradle.kts": lazy_regex(r"\btest\b|useJUnit|exclude|ignoreFailures|filter"),
    "package.json": lazy_regex(r"\"(?:jest|vitest|mocha|ava|test)\"|--passWithNoTests|testMatch"),
}
_LOAD_TESTS = lazy_regex(r"\bdef load_tests\s*\(")


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessChange:
    """A harness file the patch changed, why it is one, and whether the base's copy can stand
    in for it when the checks run again (`restorable`)."""

    path: str
    why: str
    restorable: bool
    added: bool = False  # the base has no such file: it is removed for the rerun


def harness_changes(changes: Sequence[FileChange],
                    lines: Sequence[DiffLine]) -> tuple[HarnessChange, ...]:
    """Every harness file the patch touches, in the order of its changes."""
    touched = {(line.path, line.text) for line in lines}
    out: dict[str, HarnessChange] = {}
    for change in changes:
        for path in dict.fromkeys(p for p in (change.old_path, change.path) if p):
            name = path.rsplit("/", 1)[-1]
            added = change.change_type in (ChangeType.ADDED, ChangeType.COPIED) or (
                change.change_type is ChangeType.RENAMED and path == change.path)
            if globs.first_match(HARNESS_FILES, path) is not None:
                out.setdefault(path, HarnessChange(path=path, restorable=True, added=added,
                                                   why="decides which tests run and how"))
            elif name in _SECTIONS and any(_SECTIONS[name]().search(text)
                                           for where, text in touched if where == path):
                out.setdefault(path, HarnessChange(path=path, restorable=False,
                                                   why="its test section changed"))
            elif path.endswith(".py") and any(_LOAD_TESTS().search(text)
                                              for where, text in touched if where == path):
                out.setdefault(path, HarnessChange(path=path, restorable=False,
                                                   why="its load_tests decides which tests run"))
    return tuple(out.values())


def harness_findings(changes: Sequence[FileChange],
                     lines: Sequence[DiffLine]) -> list[JudgeFinding]:
    """One ERROR finding per harness file: it blocks SUCCESS (a person looks), never silently."""
    return [JudgeFinding(
        severity=Severity.ERROR, category="harness-changed", file_path=change.path,
        blocks_auto_pr=True,
        message=f"the patch changes the test harness: {change.path} ({change.why})")
        for change in harness_changes(changes, lines)]
