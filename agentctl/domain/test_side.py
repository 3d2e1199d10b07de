"""A patch's two sides: the *test side* decides what the tests are and how they run; the rest is
the *code side*.

Any file the patch adds or changes may run inside the test process: a `conftest.py` that
reports every test passed, a `pytest.toml` that deselects the broken one, a `sitecustomize.py`,
a `Makefile` recipe that ignores the exit code. So the verdict never rests on a run whose tests
are the patch's alone: the patch's code runs under the base's test side (regression evidence)
and the patch's test side runs on the base's code (fix evidence). The rule is broad on purpose:
a code file taken for a test file costs a false "the fix is not shown" at worst, a test file
taken for code lets the patch grade itself. It is `[verification] test_paths`, frozen in the
spec; the files each verify command names are added to it.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentctl.domain import globs
from agentctl.domain.findings import DiffLine
from agentctl.domain.lazy_regex import lazy_regex
from agentctl.domain.patch import FileChange

# Test files by each runner's discovery rules (unittest's `test*.py` holds pytest's
# `test_*.py`; Django's runner finds `app/tests.py`), the test folders (their `__init__.py` and
# helpers with them), every file a runner reads its configuration from, what Python runs at
# start-up, and the files a verify command commonly runs through.
DEFAULT_TEST_PATHS = (
    "test", "tests", "testing", "__tests__", "spec",
    "test*.py", "*_test.py", "tests.py", "conftest.py", "*_test.go", "*Test.java", "*Tests.java",
    "*IT.java", "*Test.kt", "*.test.*", "*.spec.*", "*_spec.rb",
    "pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg",
    "noxfile.py", ".coveragerc", "sitecustomize.py", "usercustomize.py", "*.pth",
    "Makefile", "makefile", "GNUmakefile", "*.mk",
    "jest.config.*", "jest.setup.*", "vitest.config.*", "vitest.workspace.*", "karma.conf.*",
    ".mocharc*", "phpunit.xml", "phpunit.xml.dist",
)
# Files with a test section among other things: on the test side (and a harness change for
# the judge) when the diff touches it.
TEST_SECTIONS = {
    "pyproject.toml": lazy_regex(r"pytest|addopts|testpaths|python_files|python_classes|"
                                 r"python_functions|unittest|coverage|tool\.tox|nox"),
    "pom.xml": lazy_regex(r"surefire|failsafe|skipTests|testFailureIgnore|maven\.test|"
                          r"<excludes?>|<includes?>|<test|argLine"),
    "build.gradle": lazy_regex(r"\btest\b|useJUnit|exclude|ignoreFailures|filter"),
    "build.gradle.kts": lazy_regex(r"\btest\b|useJUnit|exclude|ignoreFailures|filter"),
    "package.json": lazy_regex(r"\"(?:jest|vitest|mocha|ava|test|pretest|posttest)\"|"
                               r"--passWithNoTests|testMatch"),
}
# a script a command runs through (a folder it names is the runner's to search, not a file)
_RUN_THROUGH = lazy_regex(r"(?:[\w.-]+/)*[\w.-]+\.(?:sh|bash|py|mk|js|mjs|cjs|ts|pl|rb|cfg|ini|toml)")


@dataclass(frozen=True, slots=True)
class PatchSides:
    """The paths of a patch's changes on each side (both paths of a rename whose either end is
    on the test side are there: the move is a test-side change)."""

    test: tuple[str, ...]
    code: tuple[str, ...]

    @property
    def has_test_side(self) -> bool:
        return bool(self.test)


def frozen_test_paths(configured: Sequence[str], commands: Iterable[str]) -> tuple[str, ...]:
    """The frozen rule: the configured globs and each repository file a verify command names
    (`bash scripts/test.sh`, `python run_tests.py`)."""
    named: list[str] = []
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        for word in words[1:]:
            text = (word.partition("=")[2] if word.startswith("-") else word).removeprefix("./")
            if (text and not text.startswith(("/", "-", "~", "$"))
                    and ".." not in text.split("/") and not any(c in text for c in "*?[]{}:\\")
                    and _RUN_THROUGH().fullmatch(text)):
                named.append(text.strip("/"))
    return tuple(dict.fromkeys((*configured, *named)))


def is_test_path(path: str, patterns: Sequence[str]) -> bool:
    return globs.first_match(patterns, path) is not None


def split_patch(changes: Sequence[FileChange], lines: Sequence[DiffLine],
                patterns: Sequence[str]) -> PatchSides:
    """Each changed path on its side. A file with a test section (pyproject.toml, pom.xml,
    package.json) is on the test side when the diff's lines in it touch that section."""
    touched: dict[str, list[str]] = {}
    for line in lines:
        touched.setdefault(line.path, []).append(line.text)
    test: dict[str, None] = {}
    code: dict[str, None] = {}
    for change in changes:
        paths = change.touched_paths()
        if any(_on_test_side(p, patterns, touched.get(p, ())) for p in paths):
            test.update(dict.fromkeys(paths))
        else:
            code.update(dict.fromkeys(paths))
    return PatchSides(test=tuple(test), code=tuple(p for p in code if p not in test))


def _on_test_side(path: str, patterns: Sequence[str], texts: Sequence[str]) -> bool:
    if is_test_path(path, patterns):
        return True
    section = TEST_SECTIONS.get(path.rsplit("/", 1)[-1])
    return section is not None and any(section().search(text) for text in texts)
