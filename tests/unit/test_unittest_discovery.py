"""A verify command's `unittest discover` names its own test files (`-p "check_*.py"`): they join
the run's test side, read from the task's configured command as unittest's own parser reads it;
a bad or absent pattern falls back to unittest's default."""

from __future__ import annotations

import pytest

from agentctl.domain.test_side import (
    DEFAULT_TEST_PATHS,
    PytestDiscovery,
    is_test_path,
    side_rule,
)
from agentctl.domain.unittest_discovery import unittest_test_globs

PY = "python -m unittest discover"


@pytest.mark.parametrize("command", [
    f'{PY} -s tests -p "check_*.py"',
    f"{PY} -s tests -t . -p check_*.py",
    f"{PY} --start-directory=tests --pattern=check_*.py --top-level-directory=.",
    f"{PY} --start tests --p check_*.py",  # abbreviations, as argparse takes them
    f"{PY} -stests -pcheck_*.py",
    f"{PY} -s=tests -p=check_*.py",
    f"{PY} -v -f -k add -s tests -vbp check_*.py",
    f"{PY} tests check_*.py .",
    f"{PY} -p test_*.py -s tests -p check_*.py",  # the last one wins
    "python3 -munittest discover -s ./tests/ -p check_*.py",
    f"bash -c 'cd . && {PY} -s tests -p check_*.py'",
])
def test_a_discover_pattern_and_start_dir_name_the_test_files(command: str) -> None:
    assert unittest_test_globs([command]) == ("tests/**/check_*.py",)


@pytest.mark.parametrize(("command", "found"), [
    (f"{PY} -s tests", ("tests/**/test*.py",)),  # absent: the default
    (f"{PY} -s tests -p checks/check_*.py", ("tests/**/test*.py",)),  # no file name
    (f"{PY} -s tests -p '*'", ("tests/**/test*.py",)),  # every path would be a test
    (f"{PY} -s tests -p 'a['", ("tests/**/test*.py",)),  # no glob
    (f"{PY} -p check_*.py", ("check_*.py",)),  # from the current folder: at any depth
    (f"{PY} -s /abs/tests -p check_*.py", ("check_*.py",)),
    (f"{PY} -s ../up -p check_*.py", ("check_*.py",)),
    (f"{PY} -s pkg.tests -p check_*.py", ("pkg.tests/**/check_*.py", "pkg/tests/**/check_*.py")),
    (f"{PY} -s tests -x -p check_*.py", ()),  # unittest refuses the line: it finds nothing
    (f"{PY} -s tests -p", ()),
    ("python -m unittest -p check_*.py", ()),  # only discover has a pattern
    ("python -m pytest -p check_plugin", ()),  # pytest's -p loads a plugin
    (f"{PY} -s tests && echo -p check_*.py", ("tests/**/test*.py",)),
    (f"{PY} -s 'tests", ()),  # no shell words
])
def test_bad_or_absent_patterns_fall_back_to_the_default(
        command: str, found: tuple[str, ...]) -> None:
    assert unittest_test_globs([command]) == found


def test_the_runs_rule_holds_the_frozen_one_and_the_projects_own() -> None:
    rule = side_rule(DEFAULT_TEST_PATHS, PytestDiscovery(python_files=("spec_*.py",)), (),
                     [f'{PY} -s tests -p "check_*.py"', "python -m pytest -q"])

    assert rule.own == ("spec_*.py", "tests/**/check_*.py")
    assert rule.paths[:len(DEFAULT_TEST_PATHS)] == DEFAULT_TEST_PATHS
    assert rule.is_own_test_file("tests/sub/check_calc.py")
    assert not rule.is_own_test_file("check_calc.py")  # outside the start dir: code
    assert not is_test_path("check_calc.py", rule.paths)
