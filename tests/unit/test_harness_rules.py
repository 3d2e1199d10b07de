"""Which changed files are the test harness: named files, test sections of larger ones, and
unittest's load_tests; what the harness rerun can put back and what only the judge names."""

from __future__ import annotations

from agentctl.domain.enums import ChangeType
from agentctl.domain.harness import harness_changes, harness_findings
from agentctl.domain.judge import DiffLine
from agentctl.domain.patch import FileChange


def change(path: str, kind: ChangeType = ChangeType.MODIFIED,
           old: str | None = None) -> FileChange:
    return FileChange(path=path, change_type=kind, additions=1, deletions=0, generated=False,
                      binary=False, lockfile=False, test_file=False, forbidden_by_policy=False,
                      old_path=old)


def added(path: str, text: str) -> DiffLine:
    return DiffLine(path=path, line_number=1, added=True, text=text)


def test_dedicated_harness_files_are_named() -> None:
    found = harness_changes([change("tests/conftest.py", ChangeType.ADDED), change("tox.ini"),
                             change("web/jest.config.js"), change("src/app.py")], [])
    assert [h.path for h in found] == ["tests/conftest.py", "tox.ini", "web/jest.config.js"]


def test_every_pytest_config_file_and_python_start_up_hook_is_harness() -> None:
    paths = ["pytest.toml", ".pytest.toml", ".pytest.ini", "src/sitecustomize.py",
             "usercustomize.py", "lib/zz_patch.pth"]
    found = harness_changes([change(path, ChangeType.ADDED) for path in paths], [])
    assert [h.path for h in found] == paths


def test_a_test_section_of_a_larger_file_is_named_when_the_diff_touches_it() -> None:
    lines = [added("pyproject.toml", 'addopts = "--deselect tests/test_a.py::test_b"'),
             added("pom.xml", "<testFailureIgnore>true</testFailureIgnore>"),
             added("package.json", '"version": "2.0.0"')]
    found = harness_changes([change("pyproject.toml"), change("pom.xml"),
                             change("package.json")], lines)
    assert [(h.path, h.why) for h in found] == [("pyproject.toml", "its test section changed"),
                                                ("pom.xml", "its test section changed")]


def test_a_load_tests_hook_in_a_test_module_is_a_harness_change() -> None:
    lines = [added("tests/test_a.py", "def load_tests(loader, tests, pattern):")]
    (found,) = harness_changes([change("tests/test_a.py")], lines)
    assert found.why == "its load_tests decides which tests run"


def test_renaming_the_harness_away_names_both_sides() -> None:
    found = harness_changes([change("pytest.ini.off", ChangeType.RENAMED, old="pytest.ini")], [])
    assert [h.path for h in found] == ["pytest.ini"]


def test_each_harness_file_is_a_blocking_judge_finding() -> None:
    (finding,) = harness_findings([change("pytest.ini")], [])
    assert (finding.category, finding.severity.value, finding.blocks_auto_pr) == (
        "harness-changed", "ERROR", True)
    assert finding.message == ("the patch changes the test harness: pytest.ini (decides which "
                               "tests run and how)")
