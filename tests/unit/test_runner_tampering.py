"""Code-side lines that reach into the test runner are a blocking finding of the rules judge;
the same lines in test-side files are not this rule's to judge."""

from __future__ import annotations

import pytest

from agentctl.domain.enums import ChangeType, JudgeStatus, Severity
from agentctl.domain.judge import DiffLine, JudgeFinding, judge_by_rules
from agentctl.domain.patch import FileChange, PatchBoundaryCheck
from agentctl.domain.runner_tampering import CATEGORY, runner_tampering_findings
from agentctl.domain.spec import JudgePolicy
from agentctl.domain.test_side import DEFAULT_TEST_PATHS, SideRule


def added(path: str, text: str) -> DiffLine:
    return DiffLine(path=path, line_number=3, added=True, text=text)


@pytest.mark.parametrize(("text", "what"), [
    ("import _pytest.reports", "imports or patches the test runner"),
    ("    _pytest.reports.TestReport.from_item_and_call = staticmethod(_passing)",
     "imports or patches the test runner"),
    ("import pytest", "imports or patches the test runner"),
    ("from pytest import MonkeyPatch", "imports or patches the test runner"),
    ("from unittest.result import TestResult", "imports or patches the test runner"),
    ("import unittest.runner", "imports or patches the test runner"),
    ("def pytest_collection_modifyitems(items):", "defines a pytest hook"),
    ("    async def pytest_runtest_makereport (item, call):", "defines a pytest hook"),
    ("    atexit.register(os._exit, 0)", "ends its process with os._exit"),
    ("    atexit._clear()", "touches the interpreter's exit handlers"),
    ("if os.environ.get('PYTEST_CURRENT_TEST'):", "reads whether it runs under test"),
    ("if 'pytest' in sys.modules:", "reads whether it runs under test"),
    ('testing = sys.modules["pytest"]', "reads whether it runs under test"),
    ("if any(k.startswith('AGENTCTL') for k in os.environ):", "reads whether it runs under test"),
])
def test_a_code_side_line_reaching_into_the_runner_is_named(text: str, what: str) -> None:
    (finding,) = runner_tampering_findings([added("src/calc.py", text)], DEFAULT_TEST_PATHS)

    assert (finding.category, finding.severity, finding.blocks_auto_pr) == (
        CATEGORY, Severity.ERROR, True)
    assert finding.message == f"src/calc.py {what}: {text.strip()}"
    assert (finding.file_path, finding.line_number) == ("src/calc.py", 3)


def test_test_side_files_removed_lines_and_plain_code_are_not_named() -> None:
    lines = [added("tests/test_calc.py", "import pytest"),
             added("conftest.py", "import _pytest.reports"),
             added("tests/conftest.py", "def pytest_collection_modifyitems(items):"),
             added("src/calc.py", "    # like def pytest_configure(config) in the docs"),
             DiffLine(path="src/calc.py", line_number=1, added=False, text="import pytest"),
             added("src/calc.py", "def add(a, b):"),
             added("src/calc.py", "    return a + b  # pytest-friendly")]

    assert runner_tampering_findings(lines, DEFAULT_TEST_PATHS) == []


def test_prose_is_not_code_and_other_languages_are_held_to_the_environment_signals() -> None:
    lines = [added("README.md", "Run `import pytest` and use atexit"),
             added("scripts/build.sh", "echo atexit TestResult"),
             added("web/app.js", "if (process.env.AGENTCTL_HOME) { fake(); }")]

    assert [(f.file_path, f.message.split(":")[0]) for f in
            runner_tampering_findings(lines, DEFAULT_TEST_PATHS)] == [
        ("web/app.js", "web/app.js reads whether it runs under test")]


def test_the_spec_rule_decides_which_side_a_file_is_on() -> None:
    line = added("checks/run.py", "import pytest")

    assert runner_tampering_findings([line], ("checks",)) == []
    assert len(runner_tampering_findings([line], DEFAULT_TEST_PATHS)) == 1


def change(path: str, kind: ChangeType = ChangeType.MODIFIED) -> FileChange:
    return FileChange(path=path, change_type=kind, additions=1, deletions=0, generated=False,
                      binary=False, lockfile=False, test_file=False, forbidden_by_policy=False)


def judged(changes: list[FileChange], lines: list[DiffLine],
           side: SideRule | None) -> list[JudgeFinding]:
    return list(judge_by_rules(
        instruction="fix add", changes=changes, diff_lines=lines,
        boundary=PatchBoundaryCheck(passed=True, allowed_path_violations=(),
                                    forbidden_path_violations=(), unexpected_generated_files=(),
                                    unexpected_lockfile_changes=()),
        policy=JudgePolicy(strict=False, min_confidence=0.5, command=None, timeout_seconds=60,
                           max_diff_lines=1000, production_config_patterns=()),
        side=side).findings)


def test_the_rules_judge_reports_it_and_asks_for_review() -> None:
    judgement = judge_by_rules(
        instruction="fix add", changes=[change("src/calc.py")],
        diff_lines=[added("src/calc.py", "import _pytest.reports")],
        boundary=PatchBoundaryCheck(passed=True, allowed_path_violations=(),
                                    forbidden_path_violations=(), unexpected_generated_files=(),
                                    unexpected_lockfile_changes=()),
        policy=JudgePolicy(strict=False, min_confidence=0.5, command=None, timeout_seconds=60,
                           max_diff_lines=1000, production_config_patterns=()),
        side=SideRule(frozen=("tests",)))

    assert [f.category for f in judgement.findings if f.category == CATEGORY] == [CATEGORY]
    assert judgement.status is JudgeStatus.NEEDS_HUMAN_REVIEW


def test_the_judge_reads_the_projects_own_test_files_as_the_evidence_does() -> None:
    """`python_files = check_*.py`: checks/check_calc.py is a test file, so its `import pytest`
    is no finding, its lost assertion and its deletion are; calc.py stays code."""
    side = SideRule(frozen=DEFAULT_TEST_PATHS, own=("check_*.py", "checks"))
    lines = [added("checks/check_calc.py", "import pytest"),
             DiffLine(path="checks/check_calc.py", line_number=5, added=False,
                      text="    assert add(2, 3) == 5"),
             added("calc.py", "import atexit")]
    changes = [change("checks/check_calc.py"), change("checks/check_mul.py", ChangeType.DELETED),
               change("calc.py")]

    found = [(f.category, f.file_path) for f in judged(changes, lines, side)
             if f.category in (CATEGORY, "tests-deleted", "assertions-removed")]
    assert found == [("tests-deleted", "checks/check_mul.py"),
                     ("assertions-removed", "checks/check_calc.py"), (CATEGORY, "calc.py")]
    # the frozen rule alone (what the judge used before) takes the test file for code
    assert (CATEGORY, "checks/check_calc.py") in [
        (f.category, f.file_path) for f in judged(changes, lines, SideRule(DEFAULT_TEST_PATHS))]


def test_a_spec_without_a_rule_is_judged_by_the_default_one_and_the_projects_own() -> None:
    lines = [added("tests/test_calc.py", "import pytest"), added("checks/check_calc.py",
                                                               "import pytest")]
    changes = [change("tests/test_calc.py"), change("checks/check_calc.py")]

    assert [f for f in judged(changes, lines, SideRule((), own=("checks",)))
            if f.category == CATEGORY] == []
