"""The runners' own report formats (JUnit XML, unittest's and go test -json's output) read
into TestResults, apart from where a run leaves them so that each module has one job."""

from __future__ import annotations

import importlib
import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.ansi import strip_ansi
from agentctl.domain.enums import TestOutcome
from agentctl.domain.lazy_regex import lazy_regex
from agentctl.domain.verification import TestResult

T = TestOutcome
MAX_REPORT_BYTES = 64 << 20

_UNITTEST_START = lazy_regex(r"^(\w+) \(([\w.]+)\)(?: \.\.\. (.*))?$")
_UNITTEST_END = lazy_regex(
    r"(ok|FAIL|ERROR|skipped '.*'|skipped \".*\"|expected failure|unexpected success)$")
UNITTEST_RAN = lazy_regex(r"^Ran (\d+) tests? in ")
_UNITTEST_SKIPPED = lazy_regex(r"^(?:OK|FAILED) \(.*\bskipped=(\d+)")
_UNITTEST_PROBLEM = lazy_regex(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)")
EXCEPTION_LINE = lazy_regex(r"^[A-Za-z_][\w.]*(?:Error|Exception|Failure|Exit)\b")
SEPARATOR = lazy_regex(r"^(?:={20,}|-{20,})$")
_UNITTEST_VERDICTS = {"ok": T.PASSED, "FAIL": T.FAILED, "ERROR": T.ERROR,
                      "expected failure": T.PASSED, "unexpected success": T.FAILED}
_GO_ACTIONS = {"pass": T.PASSED, "fail": T.FAILED, "skip": T.SKIPPED}
_ASSERT_EXPRESSION = lazy_regex(r"\bassert\s")
GO_MESSAGE = lazy_regex(r"^\s+\S+\.go:\d+: (.*)$")


def load_junit_reader_beside() -> None:
    """Import the JUnit reader on a thread of its own while a run that will leave a report goes
    on: its import (~25 ms, mostly `importlib.metadata` for its own version) would otherwise
    come between the run's end and whatever waits for its results (a rerun, the verdict)."""
    if "junitparser" not in sys.modules:
        threading.Thread(target=importlib.import_module, args=("junitparser",),
                         name="agentctl-junit-import", daemon=True).start()


def parse_junit(path: Path, *, pytest_ids: bool = False, root: Path | None = None,
                ) -> list[TestResult]:
    """Every test case of a JUnit XML file. With `pytest_ids`, ids are pytest node ids (from
    the xunit1 `file` attribute, or for an inherited test from the module files under `root`,
    pytest's root folder), else `classname.name`. Raises SyntaxError for a malformed file,
    ValueError for one over 64 MiB or XML that is no JUnit report (junitparser's JUnitXmlError:
    so a caller need not import junitparser, ~20 ms, to catch it)."""
    from junitparser import (  # ~20 ms: late
        Error,
        Failure,
        JUnitXml,
        JUnitXmlError,
        Skipped,
        TestCase,
        TestSuite,
    )

    if path.stat().st_size > MAX_REPORT_BYTES:
        raise ValueError(f"{path} is larger than {MAX_REPORT_BYTES} bytes")
    try:
        xml = JUnitXml.fromfile(str(path))
    except JUnitXmlError as error:
        raise ValueError(f"{path} is no JUnit report: {error}") from error
    suites = [xml] if isinstance(xml, TestSuite) else list(xml)
    results: list[TestResult] = []
    for suite in suites:
        for case in suite:
            if not isinstance(case, TestCase):
                continue
            outcome, message = T.PASSED, None
            for result in case.result:
                if isinstance(result, (Failure, Error)):
                    outcome = T.FAILED if isinstance(result, Failure) else T.ERROR
                    message = first_assertion(result.message or result.text or "")
                    break
                if isinstance(result, Skipped):
                    outcome = T.SKIPPED
            test_id = _pytest_node_id(case, root) if pytest_ids else None
            if test_id is None:
                test_id = f"{case.classname}.{case.name}" if case.classname else str(case.name)
            seconds = getattr(case, "time", None)
            results.append(TestResult(test_id=test_id, outcome=outcome, message=message,
                                      duration_seconds=float(seconds) if seconds else None))
    return results


@dataclass(frozen=True, slots=True)
class UnittestRun:
    results: list[TestResult]
    unnamed_passed: int = 0  # without -v, unittest names only the tests that failed
    unnamed_skipped: int = 0
    counted: bool = False  # unittest said how many tests it ran (`Ran 0 tests` included)


def parse_unittest(lines: Iterator[str]) -> UnittestRun:
    """unittest's `-v` lines (`test_x (mod.Class.test_x) ... ok`) and the FAIL:/ERROR: sections
    any verbosity prints; without `-v` only the failing tests are named, the rest counted from
    `Ran N tests` and `OK (skipped=N)`."""
    outcomes: dict[str, TestOutcome] = {}
    messages: dict[str, str] = {}
    pending: str | None = None
    section: str | None = None
    ran = skipped = 0
    counted = False
    for line in lines:
        if match := _UNITTEST_PROBLEM().match(line):
            section = _unittest_id(match.group(2), match.group(3))
            outcomes[section] = T.FAILED if match.group(1) == "FAIL" else T.ERROR
            continue
        if match := UNITTEST_RAN().match(line):
            ran, section, counted = ran + int(match.group(1)), None, True
            continue
        if match := _UNITTEST_SKIPPED().match(line):
            skipped += int(match.group(1))
            continue
        if section is not None:
            if SEPARATOR().match(line) and section in messages:
                section = None
            elif section not in messages and EXCEPTION_LINE().match(line):
                messages[section] = line.strip()
            continue
        if match := _UNITTEST_START().match(line):
            pending = _unittest_id(match.group(1), match.group(2))
            rest = match.group(3)
            if rest is None:
                continue
            line = rest
        if pending is not None and (end := _UNITTEST_END().search(line.strip())):
            word = end.group(1)
            outcomes[pending] = T.SKIPPED if word.startswith("skipped") else _UNITTEST_VERDICTS[word]
            pending = None
    results = [TestResult(test_id=test_id, outcome=outcome, message=messages.get(test_id))
               for test_id, outcome in outcomes.items()]
    named_skipped = sum(1 for r in results if r.outcome is T.SKIPPED)
    unnamed_skipped = max(skipped - named_skipped, 0)
    unnamed_passed = max(ran - len(results) - unnamed_skipped, 0)
    return UnittestRun(results, unnamed_passed, unnamed_skipped, counted)


def parse_go_json(lines: Iterator[str]) -> list[TestResult]:
    """`go test -json` events: each test's last pass/fail/skip, and its first `file.go:N:` line."""
    outcomes: dict[str, TestOutcome] = {}
    messages: dict[str, str] = {}
    seconds: dict[str, float] = {}
    for line in lines:
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or not event.get("Test"):
            continue
        test_id = f"{event.get('Package', '')}::{event['Test']}"
        action = event.get("Action")
        if action in _GO_ACTIONS:
            outcomes[test_id] = _GO_ACTIONS[action]
            if isinstance(event.get("Elapsed"), (int, float)):
                seconds[test_id] = float(event["Elapsed"])
        elif action == "output" and test_id not in messages:
            if match := GO_MESSAGE().match(str(event.get("Output", "")).rstrip("\n")):
                messages[test_id] = match.group(1).strip()
    return [TestResult(test_id=test_id, outcome=outcome,
                       message=messages.get(test_id) if outcome is T.FAILED else None,
                       duration_seconds=seconds.get(test_id))
            for test_id, outcome in outcomes.items()]


def first_assertion(message: str) -> str | None:
    """The line a reviewer needs: the first line of a failure, and the first `assert` line
    when the first one is only the assertion's own message."""
    lines = [line.strip() for line in strip_ansi(message).splitlines() if line.strip()]
    if not lines:
        return None
    first = lines[0]
    if not _ASSERT_EXPRESSION().search(first):
        for line in lines[1:6]:
            if line.startswith("assert ") or line.startswith("E       assert "):
                return f"{first}: {line.removeprefix('E').strip()}"
    return first


def _pytest_node_id(case: object, root: Path | None) -> str | None:
    """`tests/test_x.py::Class::test_y[1]` from xunit1's file, classname and name.

    `file` is where the test function is defined, the classname the node id's own module and
    classes: for a test inherited from a class in another module (a mixin in
    `tests/__init__.py`) the node id's module is the longest prefix of the classname that is a
    file under `root`. Without that, every subclass's test would get one id and one result.
    """
    file = getattr(case, "_elem").attrib.get("file")  # noqa: B009 - junitparser keeps it raw
    classname, name = getattr(case, "classname", None), getattr(case, "name", None)
    if not file or not name:
        return None
    module = file.removesuffix(".py").replace("/", ".").replace("\\", ".")
    own = classname is not None and (classname == module or classname.startswith(f"{module}."))
    if classname and not own and root is not None:
        parts = classname.split(".")
        for end in range(len(parts), 0, -1):
            candidate = "/".join(parts[:end]) + ".py"
            if (root / candidate).is_file():
                return "::".join([candidate, *parts[end:], name])
    inner = classname[len(module):].lstrip(".") if classname and own else ""
    parts = [file, *(inner.split(".") if inner else ()), name]
    return "::".join(part for part in parts if part)


def _unittest_id(name: str, where: str) -> str:
    return where if where.endswith(f".{name}") else f"{where}.{name}"
