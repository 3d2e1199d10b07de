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

import configparser
import shlex
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from agentctl.domain import globs
from agentctl.domain.errors import BadInput
from agentctl.domain.findings import DiffLine
from agentctl.domain.lazy_regex import lazy_regex
from agentctl.domain.patch import FileChange
from agentctl.domain.toml_text import NotToml, parsed_toml
from agentctl.domain.unittest_discovery import discover_in

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
# Files whose tables are read by line: an edit inside a pytest table is on the test side
# whatever its line says (`"-p", "calc",` added to an `addopts` list names nothing).
TEST_TABLES = {"pyproject.toml": "tool.pytest"}
# a script a command runs through (a folder it names is the runner's to search, not a file)
_RUN_THROUGH = lazy_regex(r"(?:[\w.-]+/)*[\w.-]+\.(?:sh|bash|py|mk|js|mjs|cjs|ts|pl|rb|cfg|ini|toml)")


# pytest's config files at the repository's root, and where each keeps its options
PYTEST_CONFIGS = {"pytest.toml": "pytest", ".pytest.toml": "pytest", "pytest.ini": "pytest",
                  ".pytest.ini": "pytest", "pyproject.toml": "tool.pytest.ini_options",
                  "tox.ini": "pytest", "setup.cfg": "tool:pytest"}
_DISCOVERY = ("python_files", "testpaths")
# pytest's own default `python_files`
PYTEST_FILES = ("test_*.py", "*_test.py")


@dataclass(frozen=True, slots=True)
class PytestDiscovery:
    """A project's own pytest discovery settings, as the base's config files give them."""

    python_files: tuple[str, ...] = ()
    testpaths: tuple[str, ...] = ()

    def package_markers(self) -> tuple[str, ...]:
        """The files that say a `testpaths` folder is a package of the project's code."""
        return tuple(f"{folder}/__init__.py" for folder in self.testpaths)

    def test_paths(self, packages: Collection[str] = ()) -> tuple[str, ...]:
        """The globs these settings add to the test side. A `testpaths` folder of tests alone
        (`checks`) joins whole, helpers included, as `tests/` does; one that is a package of
        the project's code (`testpaths = ["toolz"]`, its tests in `toolz/tests/`; `packages`
        holds such folders) joins only through its test files (`python_files`, or pytest's
        defaults): its code stays the code side."""
        files = self.python_files or PYTEST_FILES
        out = list(self.python_files)
        for folder in self.testpaths:
            out += [f"{folder}/**/{name}" for name in files] if folder in packages else [folder]
        return tuple(dict.fromkeys(out))


def pytest_discovery(configs: Mapping[str, str]) -> PytestDiscovery:
    """The project's `python_files` (`check_*.py`) and `testpaths` folders, from each of
    `configs` (file name to the base's text), whichever pytest would pick. A value that is no
    valid glob is left out; a file that does not parse adds nothing."""
    found: dict[str, list[str]] = {key: [] for key in _DISCOVERY}
    for name, text in configs.items():
        where = PYTEST_CONFIGS.get(name)
        if where is not None:
            for key, values in _options(name, text, where).items():
                found[key] += values
    return PytestDiscovery(python_files=_globs(found["python_files"]),
                           testpaths=_globs(found["testpaths"]))


def _globs(values: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        try:
            out.append(globs.validate_glob(value).strip("/"))
        except BadInput:
            continue
    return tuple(dict.fromkeys(p for p in out if p and p not in ("*", "**", ".")))


def _options(name: str, text: str, where: str) -> dict[str, list[str]]:
    if name.endswith(".toml"):
        data = _toml(text)
        if data is None:
            return {}
        # pyproject.toml: the ini-style table, or pytest 9's own `[tool.pytest]`
        table = _table(data, where) or _table(data, "tool.pytest" if name == "pyproject.toml"
                                              else where)
        return {key: _words(table.get(key)) for key in _DISCOVERY}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    if not parser.has_section(where):
        return {}
    return {key: parser.get(where, key, fallback="").split() for key in _DISCOVERY}


def _table(data: dict[str, object], dotted: str) -> dict[str, object]:
    table: object = data
    for key in dotted.split("."):
        table = table.get(key) if isinstance(table, dict) else None
    return table if isinstance(table, dict) else {}


def _words(value: object) -> list[str]:
    """A TOML option's values: a list's items, or a string's words."""
    if isinstance(value, list):
        return [str(item) for item in value]
    return str(value).split() if isinstance(value, str) else []


@dataclass(frozen=True, slots=True)
class SideRule:
    """Which side of a patch each path is on, for one run: the spec's frozen rule (`frozen`)
    and the test files and folders the project's own discovery names (`own`: the base's
    `python_files` and `testpaths`, a verify command's `unittest discover -p`). Made once per
    run, before any check runs, from the base and the spec only: the evidence's sides and
    the judge's read the same rule, and nothing the patch writes moves a file across it."""

    frozen: tuple[str, ...]
    own: tuple[str, ...] = ()
    through: tuple[str, ...] = ()  # the base's Makefiles a verify command runs through

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.frozen, *self.own, *self.through)))

    def is_own_test_file(self, path: str) -> bool:
        """A test module (or a file in a test folder) by the project's own discovery."""
        return bool(self.own) and is_test_path(path, self.own)


def side_rule(frozen: Sequence[str], discovery: PytestDiscovery, packages: Collection[str],
              commands: Iterable[str],
              makefiles: Mapping[str, str | None] | None = None) -> SideRule:
    """The run's rule: the frozen globs, the base's pytest discovery (`packages`: its
    `testpaths` folders that are packages of the project's code) and each verify command's
    unittest discovery, directly or through a `make` call's recipe in the base's `makefiles`
    (which join the rule as files the command runs through, not as test files)."""
    found = discover_in(commands, makefiles or {})
    own = (*discovery.test_paths(packages), *found.globs)
    return SideRule(frozen=tuple(frozen), own=tuple(dict.fromkeys(own)), through=found.read)


@dataclass(frozen=True, slots=True)
class FileTexts:
    """A file with test tables as the base has it (`before`) and as the patch leaves it
    (`after`); None where it is not there."""

    before: str | None
    after: str | None


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
                patterns: Sequence[str],
                texts: Mapping[str, FileTexts] | None = None) -> PatchSides:
    """Each changed path on its side. A file with a test section (pyproject.toml, pom.xml,
    package.json) is on the test side when the diff's lines in it touch that section; one
    with test tables (`TEST_TABLES`, its `texts` given) also when a changed line lies in one."""
    touched: dict[str, list[DiffLine]] = {}
    for line in lines:
        touched.setdefault(line.path, []).append(line)
    test: dict[str, None] = {}
    code: dict[str, None] = {}
    for change in changes:
        paths = change.touched_paths()
        if any(_on_test_side(p, patterns, touched.get(p, ()), (texts or {}).get(p))
               for p in paths):
            test.update(dict.fromkeys(paths))
        else:
            code.update(dict.fromkeys(paths))
    return PatchSides(test=tuple(test), code=tuple(p for p in code if p not in test))


def _on_test_side(path: str, patterns: Sequence[str], lines: Sequence[DiffLine],
                  texts: FileTexts | None) -> bool:
    if is_test_path(path, patterns):
        return True
    name = path.rsplit("/", 1)[-1]
    section = TEST_SECTIONS.get(name)
    if section is not None and any(section().search(line.text) for line in lines):
        return True
    table = TEST_TABLES.get(name)
    if table is None or texts is None:
        return False
    tables = {True: toml_tables(texts.after or ""), False: toml_tables(texts.before or "")}
    return any(_in_test_table(tables[line.added][line.line_number - 1], table)
               for line in lines if line.line_number is not None
               and 0 < line.line_number <= len(tables[line.added]))


def _in_test_table(table: str | None, prefix: str) -> bool:
    """A pytest table (`tool.pytest.ini_options`, `tool.pytest_env`), or a table whose dotted
    keys may reach one (the root, `[tool]`): broad, like the rest of the rule."""
    return table is None or table == prefix.split(".", 1)[0] or table.startswith(prefix)


_HEADER = lazy_regex(r"\s*\[\[?([^\[\]]+)\]\]?\s*(?:#.*)?")


def toml_tables(text: str) -> list[str | None]:
    """For each line of a TOML text, the dotted name of the table that holds it (None before
    any table). A line that looks like a header counts only where the text before it parses
    (not inside a multi-line array or string, where the patch could write one)."""
    lines = text.split("\n")  # as git numbers them (no other line break counts)
    out: list[str | None] = []
    table: str | None = None
    for index, line in enumerate(lines):
        match = _HEADER().fullmatch(line.removesuffix("\r"))
        if match is not None and _parses("\n".join(lines[:index])):
            table = "".join(c for c in match.group(1) if not c.isspace() and c not in "\"'")
        out.append(table)
    return out


def _parses(text: str) -> bool:
    return _toml(text) is not None


def _toml(text: str) -> dict[str, object] | None:
    """The TOML document `text` holds; None when it is not TOML."""
    try:
        return parsed_toml(text)
    except NotToml:
        return None
