"""The test harness: files that decide which tests run and how their results are reported.

A patch that changes one can make a failing test vanish (`addopts = --deselect ...`) or report
every test passed (a conftest hook); such a change is the project's to make, not the agent's to
make quietly: the judge names it for a person. What the verdict rests on does not depend on it:
the patch's code also runs under the base's whole test side (`test_side`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentctl.domain import globs
from agentctl.domain.enums import Severity
from agentctl.domain.findings import DiffLine, JudgeFinding
from agentctl.domain.lazy_regex import lazy_regex
from agentctl.domain.patch import FileChange
from agentctl.domain.test_side import TEST_SECTIONS

# Files whose whole job is the test harness: every file pytest reads its configuration from, and
# what Python runs at start-up (a `sitecustomize.py` or a `.pth` line can patch the runner
# before any test is collected).
HARNESS_FILES = (
    "conftest.py", "pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "tox.ini",
    "setup.cfg", "noxfile.py", ".coveragerc", "sitecustomize.py", "usercustomize.py", "*.pth",
    "jest.config.*", "vitest.config.*", "vitest.workspace.*", "karma.conf.*", ".mocharc*",
    "phpunit.xml", "phpunit.xml.dist", "jest.setup.*",
)
_LOAD_TESTS = lazy_regex(r"\bdef load_tests\s*\(")


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessChange:
    """A harness file the patch changed, and why it is one."""

    path: str
    why: str


def harness_changes(changes: Sequence[FileChange],
                    lines: Sequence[DiffLine]) -> tuple[HarnessChange, ...]:
    """Every harness file the patch touches, in the order of its changes."""
    touched = {(line.path, line.text) for line in lines}
    out: dict[str, HarnessChange] = {}
    for change in changes:
        for path in dict.fromkeys(p for p in (change.old_path, change.path) if p):
            name = path.rsplit("/", 1)[-1]
            if globs.first_match(HARNESS_FILES, path) is not None:
                out.setdefault(path, HarnessChange(path=path,
                                                   why="decides which tests run and how"))
            elif name in TEST_SECTIONS and any(TEST_SECTIONS[name]().search(text)
                                           for where, text in touched if where == path):
                out.setdefault(path, HarnessChange(path=path, why="its test section changed"))
            elif path.endswith(".py") and any(_LOAD_TESTS().search(text)
                                              for where, text in touched if where == path):
                out.setdefault(path, HarnessChange(path=path,
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
