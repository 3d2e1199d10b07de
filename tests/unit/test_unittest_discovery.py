"""A verify command's `unittest discover` names its own test files (`-p "check_*.py"`): they join
the run's test side, read from the task's configured command as unittest's own parser reads it;
a bad or absent pattern falls back to unittest's default. The start dir resolves in the folder
the command runs in (`cd DIR &&`), and a `make` call's recipe is read from the base's Makefile."""

from __future__ import annotations

import pytest

from agentctl.domain.test_side import (
    DEFAULT_TEST_PATHS,
    PytestDiscovery,
    is_test_path,
    side_rule,
)
from agentctl.domain.unittest_discovery import discover_in

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
    assert discover_in([command], {}).globs == ("tests/**/check_*.py",)


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
    (f"{PY} -s tests -p check_*.py 2>&1 | tee log", ("tests/**/check_*.py",)),  # the shell's
    (f"{PY} -s tests -p check_*.py > log", ("tests/**/check_*.py",)),
    (f"{PY} -s tests -p $PATTERN", ("tests/**/test*.py",)),  # a variable names no pattern
])
def test_bad_or_absent_patterns_fall_back_to_the_default(
        command: str, found: tuple[str, ...]) -> None:
    assert discover_in([command], {}).globs == found


def test_the_runs_rule_holds_the_frozen_one_and_the_projects_own() -> None:
    rule = side_rule(DEFAULT_TEST_PATHS, PytestDiscovery(python_files=("spec_*.py",)), (),
                     [f'{PY} -s tests -p "check_*.py"', "python -m pytest -q"])

    assert rule.own == ("spec_*.py", "tests/**/check_*.py")
    assert rule.paths[:len(DEFAULT_TEST_PATHS)] == DEFAULT_TEST_PATHS
    assert rule.is_own_test_file("tests/sub/check_calc.py")
    assert not rule.is_own_test_file("check_calc.py")  # outside the start dir: code
    assert not is_test_path("check_calc.py", rule.paths)


@pytest.mark.parametrize(("command", "found"), [
    # the pattern applies in DIR: the start dir (".", or -s) resolves there
    (f"cd pkg && {PY} -p 'check_*.py'", ("pkg/**/check_*.py",)),
    (f"cd pkg && {PY} -s tests -p 'check_*.py'", ("pkg/tests/**/check_*.py",)),
    (f"cd ./pkg/ && cd sub && {PY} -s . -p check_*.py", ("pkg/sub/**/check_*.py",)),
    (f"pushd pkg && {PY} -s tests -p check_*.py", ("pkg/tests/**/check_*.py",)),
    (f"cd pkg&&{PY} -s tests -p check_*.py", ("pkg/tests/**/check_*.py",)),
    (f"cd pkg && {PY} -s lib.tests -p check_*.py",
     ("pkg/lib.tests/**/check_*.py", "pkg/lib/tests/**/check_*.py")),
    (f"bash -c 'cd pkg && {PY} -s tests -p check_*.py'", ("pkg/tests/**/check_*.py",)),
    (f"cd pkg && bash -c '{PY} -s tests -p check_*.py'", ("pkg/tests/**/check_*.py",)),
    # a subshell's cd ends with it
    (f"(cd pkg && {PY} -p 'a_*.py'); {PY} -s t -p 'b_*.py'", ("pkg/**/a_*.py", "t/**/b_*.py")),
    # a cd that may not have happened: the pattern at any depth
    (f"cd pkg; {PY} -s tests -p check_*.py", ("check_*.py",)),
    (f"cd pkg || exit 1; {PY} -s tests -p check_*.py", ("check_*.py",)),
    (f"cd pkg && true; {PY} -s tests -p check_*.py", ("check_*.py",)),
    (f"cd pkg && {PY} -p a_*.py || {PY} -s t -p b_*.py", ("pkg/**/a_*.py", "b_*.py")),
    (f"cd pkg && ({PY} -p a_*.py); {PY} -s t -p b_*.py", ("pkg/**/a_*.py", "b_*.py")),
    (f"(cd pkg && true; {PY} -s t -p a_*.py)", ("a_*.py",)),
    (f"cd pkg extra && {PY} -s tests -p check_*.py", ("check_*.py",)),
    # a folder that is no plain relative one
    (f"cd /srv/pkg && {PY} -s tests -p check_*.py", ("check_*.py",)),
    (f"cd .. && {PY} -s tests -p check_*.py", ("check_*.py",)),
    (f"cd $DIR && {PY} -s tests -p check_*.py", ("check_*.py",)),
    (f"cd pkg && {PY} -s /srv/tests -p check_*.py", ("check_*.py",)),
])
def test_the_start_dir_resolves_in_the_folder_a_cd_leaves(
        command: str, found: tuple[str, ...]) -> None:
    assert discover_in([command], {}).globs == found


# A base's Makefile: variables, a default target with a prerequisite, a recursive make into a
# folder of its own and an include
MAKEFILE = """\
PY ?= python3
PATTERN := check_*.py
include common.mk

.PHONY: test lint
test: lint ## runs the checks
\t@cd pkg && $(PY) -m unittest discover -s checks -t . \\
\t    -p '$(PATTERN)'
\t-$(MAKE) -C sub unit

lint:
\t$(PY) -m unittest discover -s $(LINT_DIR) -p 'lint_*.py'

docs: ; $(PY) -m unittest discover -s docs -p 'doc_*.py'
"""
MAKEFILES = {"GNUmakefile": None, "makefile": None, "Makefile": MAKEFILE,
             "common.mk": "LINT_DIR = style\n",
             "sub/GNUmakefile": None, "sub/makefile": None,
             "sub/Makefile": "unit:\n\tpython -m unittest discover -p 'unit_*.py'\n",
             # read, and absent from the base
             "elsewhere/GNUmakefile": None, "elsewhere/makefile": None,
             "elsewhere/Makefile": None}
RECIPE_GLOBS = ("style/**/lint_*.py", "pkg/checks/**/check_*.py", "sub/**/unit_*.py")


@pytest.mark.parametrize(("command", "found"), [
    ("make test", RECIPE_GLOBS),
    ("make", RECIPE_GLOBS),  # the default target: the first
    ("make -j 2 -k test", RECIPE_GLOBS),
    ("PY=python make test", RECIPE_GLOBS),
    ("env PY=python make test", RECIPE_GLOBS),
    ("make test PATTERN=spec_*.py",  # a call's variable beats the file's
     ("style/**/lint_*.py", "pkg/checks/**/spec_*.py", "sub/**/unit_*.py")),
    ("make docs", ("docs/**/doc_*.py",)),  # a recipe after `;`
    ("make lint", ("style/**/lint_*.py",)),
    ("make -C sub unit", ("sub/**/unit_*.py",)),
    ("cd sub && make unit", ("sub/**/unit_*.py",)),
    ("make --directory=sub", ("sub/**/unit_*.py",)),
    ("make clean", ()),  # no such target: nothing runs
    ("make -C elsewhere test", ()),  # the base has no such Makefile
])
def test_a_make_targets_recipe_is_read_from_the_bases_makefile(
        command: str, found: tuple[str, ...]) -> None:
    discovery = discover_in([command], MAKEFILES)

    assert discovery.globs == found
    assert discovery.wanted == ()


def test_the_makefiles_a_make_call_needs_are_asked_for_level_by_level() -> None:
    """Nothing is known until the base's files are read: the default names first, then each
    `include` and `make -C` they lead to; absent files (None) end the search."""
    asked: dict[str, str | None] = {}
    rounds = []
    while wanted := discover_in(["make test"], asked).wanted:
        rounds.append(wanted)
        asked.update({path: MAKEFILES.get(path) for path in wanted})

    assert rounds == [("GNUmakefile", "makefile", "Makefile"),
                      ("common.mk", "sub/GNUmakefile", "sub/makefile", "sub/Makefile")]
    assert discover_in(["make test"], asked).read == ("Makefile", "common.mk", "sub/Makefile")
    assert discover_in(["make -f build/tests.mk check"], {}).wanted == ("build/tests.mk",)
    assert discover_in([f"{PY} -s tests", "python -m pytest"], {}).wanted == ()


def test_gnu_makes_first_name_wins_and_a_file_named_by_f_is_the_one_read() -> None:
    texts: dict[str, str | None] = {
        **MAKEFILES, "GNUmakefile": "test:\n\tpython -m unittest discover -p 'gnu_*.py'\n",
        "ci/tests.mk": "check:\n\tpython -m unittest discover -s ci -p 'ci_*.py'\n"}

    assert discover_in(["make test"], texts).globs == ("gnu_*.py",)
    assert discover_in(["make -f ci/tests.mk check"], texts).globs == ("ci/**/ci_*.py",)


def test_a_recipe_that_makes_itself_again_ends() -> None:
    texts = {"GNUmakefile": None, "makefile": None,
             "Makefile": "a: b\n\t$(MAKE) a\nb: a\n\tpython -m unittest discover -p 'x_*.py'\n"}
    assert discover_in(["make a"], texts).globs == ("x_*.py",)


def test_the_makefiles_join_the_rule_as_files_run_through_never_as_test_files() -> None:
    """A Makefile the command runs through is on the test side (the patch's edit to it runs
    only in the fix evidence), but deleting it is no deleted test."""
    rule = side_rule(DEFAULT_TEST_PATHS, PytestDiscovery(), (), ["make -f build/ci.make test"],
                     {"build/ci.make": "test:\n\tcd pkg && python -m unittest discover "
                                       "-s checks -p 'check_*.py'\n"})

    assert rule.own == ("pkg/checks/**/check_*.py",)
    assert rule.through == ("build/ci.make",)
    assert is_test_path("build/ci.make", rule.paths)
    assert rule.is_own_test_file("pkg/checks/check_calc.py")
    assert not rule.is_own_test_file("build/ci.make")
