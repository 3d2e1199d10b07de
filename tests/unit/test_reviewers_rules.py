"""The pure rules behind the reviewer's evidence (DESIGN.md section 9): which paths are the
patch's test side, which runs show a fix or a regression, stable test identity, and when a
flaky test is the patch's doing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentctl.domain.baseline import SideRuns, aligned, classify, flips_to_check_on_base
from agentctl.domain.enums import ChangeType
from agentctl.domain.enums import TestClassification as K
from agentctl.domain.enums import TestOutcome as T
from agentctl.domain.enums import VerificationCheckStatus as C
from agentctl.domain.findings import DiffLine
from agentctl.domain.patch import FileChange
from agentctl.domain.test_side import (
    DEFAULT_TEST_PATHS,
    FileTexts,
    pytest_discovery,
    frozen_test_paths,
    is_test_path,
    split_patch,
    toml_tables,
)
from tests.unit.test_verdict_baseline import observed


@pytest.mark.parametrize("path", [
    "tests/test_calc.py", "tests/__init__.py", "src/pkg/tests/helpers.py", "conftest.py",
    "a/b/conftest.py", "test_x.py", "x_test.py", "pytest.toml", ".pytest.toml", "pytest.ini",
    ".pytest.ini", "tox.ini", "setup.cfg", "noxfile.py", "sitecustomize.py",
    "src/usercustomize.py", "lib/evil.pth", "Makefile", "src/test/java/a/FooTest.java",
    "web/__tests__/a.js", "web/a.test.ts", "pkg/a_test.go", "testing/util.py",
    "testcalc.py", "src/pkg/testcalc.py", "shop/tests.py",
])
def test_what_decides_the_tests_is_on_the_test_side(path: str) -> None:
    assert is_test_path(path, DEFAULT_TEST_PATHS)


@pytest.mark.parametrize("path", ["src/calc.py", "calc.py", "pyproject.toml", "README.md",
                                  "src/contest.py", "src/main/java/a/Foo.java"])
def test_production_code_is_on_the_code_side(path: str) -> None:
    assert not is_test_path(path, DEFAULT_TEST_PATHS)


def change(path: str, kind: ChangeType = ChangeType.MODIFIED, old: str | None = None,
           ) -> FileChange:
    return FileChange(path=path, change_type=kind, additions=1, deletions=0, generated=False,
                      binary=False, lockfile=False, test_file=False, forbidden_by_policy=False,
                      old_path=old)


def test_a_file_with_a_test_section_is_on_the_test_side_only_when_the_diff_touches_it() -> None:
    changes = [change("pyproject.toml"), change("package.json"), change("src/a.py")]
    quiet = split_patch(changes, [DiffLine(path="pyproject.toml", line_number=3, added=True,
                                           text='version = "2.0"')], DEFAULT_TEST_PATHS)
    assert quiet.test == () and quiet.code == ("pyproject.toml", "package.json", "src/a.py")
    loud = split_patch(changes, [DiffLine(path="pyproject.toml", line_number=9, added=True,
                                          text="addopts = ['--deselect=t']")], DEFAULT_TEST_PATHS)
    assert loud.test == ("pyproject.toml",) and "pyproject.toml" not in loud.code


PYPROJECT = ('[project]\nname = "calc"\nversion = "1.0"\n\n[tool.pytest.ini_options]\n'
             'addopts = [\n  "-q",\n  "-p", "calc",\n]\n\n[tool.black]\nline-length = 99\n')


@pytest.mark.parametrize(("line", "side"), [
    (DiffLine(path="pyproject.toml", line_number=8, added=True, text='  "-p", "calc",'), "test"),
    (DiffLine(path="pyproject.toml", line_number=7, added=False, text='  "-x",'), "test"),
    (DiffLine(path="pyproject.toml", line_number=3, added=True, text='version = "1.0"'), "code"),
    (DiffLine(path="pyproject.toml", line_number=12, added=True, text="line-length = 99"),
     "code"),
], ids=["added addopts list line", "removed addopts list line", "version", "another tool"])
def test_a_pyproject_edit_inside_a_pytest_table_is_on_the_test_side_whatever_its_line(
        line: DiffLine, side: str) -> None:
    before = PYPROJECT.replace('  "-p", "calc",\n', '  "-x",\n')
    sides = split_patch([change("pyproject.toml")], [line], DEFAULT_TEST_PATHS,
                        {"pyproject.toml": FileTexts(before=before, after=PYPROJECT)})
    assert (sides.test if side == "test" else sides.code) == ("pyproject.toml",)


def test_a_table_header_written_inside_a_multiline_value_starts_no_table() -> None:
    """The patch cannot end the pytest table early with a header inside an array or string:
    a header counts only where the text before it parses."""
    text = ('[tool.pytest.ini_options]\nmarkers = """\n[tool.black]\n"""\naddopts = [\n'
            '  [1],\n  "-p", "calc",\n]\n\n[tool.black]\nx = 1\n')
    assert toml_tables(text)[:9] == ["tool.pytest.ini_options"] * 9
    assert toml_tables(text)[9:11] == ["tool.black"] * 2
    assert toml_tables('x = 1\n[ tool . "pytest_env" ]\n') == [None, "tool.pytest_env",
                                                               "tool.pytest_env"]


@pytest.mark.parametrize(("name", "text"), [
    ("pytest.ini", "[pytest]\npython_files = check_*.py\ntestpaths = checks\n"),
    (".pytest.toml", "[pytest]\npython_files = ['check_*.py']\ntestpaths = ['checks']\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\npython_files = 'check_*.py'\n"
                       "testpaths = ['checks']\n"),
    ("pyproject.toml", "[tool.pytest]\npython_files = ['check_*.py']\ntestpaths = ['checks']\n"),
    ("setup.cfg", "[tool:pytest]\npython_files = check_*.py\ntestpaths = checks\n"),
    ("tox.ini", "[tox]\nenvlist = py3\n\n[pytest]\npython_files = check_*.py\n"
                "testpaths = checks\n"),
])
def test_the_projects_own_pytest_discovery_rules_join_the_test_side(name: str, text: str) -> None:
    found = pytest_discovery({name: text}).test_paths()
    assert found == ("check_*.py", "checks")
    assert is_test_path("src/pkg/check_calc.py", found) and is_test_path("checks/util.py", found)


def test_a_testpaths_folder_that_is_the_projects_package_joins_only_through_its_test_files(
        ) -> None:
    """toolz: `testpaths = ["toolz"]`, its tests in toolz/tests/: the package's code (the
    fix) stays the code side, or the fix would be all test side and never shown."""
    discovery = pytest_discovery({"pyproject.toml": "[tool.pytest.ini_options]\n"
                                                    "testpaths = ['toolz']\n"})
    assert discovery.package_markers() == ("toolz/__init__.py",)
    found = discovery.test_paths(packages={"toolz"})
    assert found == ("toolz/**/test_*.py", "toolz/**/*_test.py")
    assert not is_test_path("toolz/itertoolz.py", found)
    assert is_test_path("toolz/sandbox/test_core.py", found)
    assert is_test_path("toolz/itertoolz.py", discovery.test_paths())  # a folder of tests alone


def test_discovery_settings_that_are_no_glob_or_do_not_parse_add_nothing() -> None:
    assert pytest_discovery({"pytest.ini": "[pytest]\ntestpaths = . * ../up a[\n",
                             "pytest.toml": "python_files = [", "setup.cfg": "[metadata]\n",
                             "README.md": "[pytest]\ntestpaths = docs\n"}).test_paths() == ()


def test_a_move_across_the_sides_is_a_test_side_change_at_both_ends() -> None:
    sides = split_patch([change("src/helpers.py", ChangeType.RENAMED, old="tests/helpers.py")],
                        (), DEFAULT_TEST_PATHS)
    assert sides.test == ("tests/helpers.py", "src/helpers.py") and sides.code == ()


def test_the_files_a_verify_command_runs_through_join_the_rule() -> None:
    paths = frozen_test_paths(("tests",), ["bash scripts/check.sh", "python -m pytest -q src/",
                                        "make test", "python manage.py test --settings=x.y"])
    assert paths == ("tests", "scripts/check.sh", "manage.py")


# --- classes from the side runs ------------------------------------------------------------

def test_a_new_test_counts_as_the_fix_only_if_it_fails_on_the_bases_code() -> None:
    candidate = observed(C.PASSED, ("t::shows", T.PASSED), ("t::asserts_bug", T.PASSED))
    base = observed(C.PASSED)
    fix = observed(C.FAILED, ("t::shows", T.FAILED), ("t::asserts_bug", T.PASSED))
    _, tests = classify(candidate, base, SideRuns(fix=fix))
    assert {t.test_id: t.classification for t in tests} == {"t::shows": K.FAIL_TO_PASS,
                                                            "t::asserts_bug": K.PASS_TO_PASS}
    _, without = classify(candidate, base)
    assert without == ()  # no fix evidence, no base copy: nothing shows a fix


def test_a_new_test_whose_module_cannot_import_on_the_bases_code_failed_there() -> None:
    candidate = observed(C.PASSED, ("tests/test_new.py::test_sub", T.PASSED))
    fix = observed(C.FAILED, ("tests/test_new.py", T.ERROR))
    _, tests = classify(candidate, observed(C.PASSED), SideRuns(fix=fix))
    assert [(t.test_id, t.classification) for t in tests] == [
        ("tests/test_new.py::test_sub", K.FAIL_TO_PASS)]


def test_a_unittest_module_that_cannot_import_on_the_base_failed_there_not_absent() -> None:
    candidate = observed(C.PASSED, ("tests.test_idna.IdnaTest.test_x", T.PASSED))
    base = observed(C.FAILED, ("unittest.loader._FailedTest.tests.test_idna", T.ERROR))
    _, tests = classify(candidate, base)
    assert [(t.classification, t.base) for t in tests] == [(K.FAIL_TO_PASS, T.ERROR)]


def test_the_bases_tests_failing_with_the_patchs_code_are_regressions_however_hidden() -> None:
    base = observed(C.PASSED, ("t.py::kept", T.PASSED), ("t.py::hidden", T.PASSED),
                    ("t.py::skipped", T.PASSED), ("t.py::gone", T.PASSED))
    candidate = observed(C.PASSED, ("t.py::kept", T.PASSED), ("t.py::skipped", T.SKIPPED))
    regression = observed(C.FAILED, ("t.py::kept", T.PASSED), ("t.py::hidden", T.FAILED),
                          ("t.py::skipped", T.FAILED), ("t.py::gone", T.PASSED))
    whole, tests = classify(candidate, base, SideRuns(
        fix=candidate, regression=regression, changed_files=frozenset({"t.py"})))
    assert {t.test_id: t.classification for t in tests} == {
        "t.py::kept": K.PASS_TO_PASS, "t.py::hidden": K.PASS_TO_FAIL,
        "t.py::skipped": K.PASS_TO_FAIL, "t.py::gone": K.PASS_TO_MISSING}
    assert whole is K.PASS_TO_FAIL


def test_an_edited_test_that_passes_only_in_its_new_version_is_named_not_blamed() -> None:
    base = observed(C.PASSED, ("t.py::mul", T.PASSED))
    candidate = observed(C.PASSED, ("t.py::mul", T.PASSED))
    regression = observed(C.FAILED, ("t.py::mul", T.FAILED))
    _, tests = classify(candidate, base, SideRuns(fix=base, regression=regression,
                                                  changed_files=frozenset({"t.py"})))
    (test,) = tests
    assert (test.classification, test.expectations_changed) == (K.PASS_TO_PASS, True)
    # the same failure with the test file untouched is the code's: a conftest changed instead
    _, untouched = classify(candidate, base, SideRuns(fix=base, regression=regression,
                                                      changed_files=frozenset({"conftest.py"})))
    assert [t.classification for t in untouched] == [K.PASS_TO_PASS, K.PASS_TO_FAIL]


def test_a_test_the_base_has_shows_the_fix_only_if_its_base_version_passes_with_the_patch(
        ) -> None:
    """A conftest of the patch's can report passed only beside the patch's code: the test
    fails on the base, in the fix evidence and under the base's tests with the patch's code
    (the regression evidence), and passes in the candidate alone. Not the fix shown."""
    base = observed(C.FAILED, ("t.py::add", T.FAILED), ("t.py::mul", T.PASSED))
    candidate = observed(C.PASSED, ("t.py::add", T.PASSED), ("t.py::mul", T.PASSED))
    fix = observed(C.FAILED, ("t.py::add", T.FAILED), ("t.py::mul", T.PASSED))
    forged = observed(C.FAILED, ("t.py::add", T.FAILED), ("t.py::mul", T.PASSED))
    whole, tests = classify(candidate, base, SideRuns(fix=fix, regression=forged))
    (add,) = [t for t in tests if t.test_id == "t.py::add"]
    assert (add.classification, add.candidate, add.base) == (K.FAIL_TO_FAIL, T.PASSED, T.FAILED)
    assert add.message == ("passes only with the patch's tests: its base version fails with "
                           "the patch's code")
    assert whole is K.FAIL_TO_FAIL
    for unseen in (observed(C.FAILED, ("t.py::mul", T.PASSED)),  # its base version never ran
                   observed(C.PASSED, ("t.py::add", T.SKIPPED))):
        _, tests = classify(candidate, base, SideRuns(fix=fix, regression=unseen))
        assert K.FAIL_TO_PASS not in {t.classification for t in tests}
    fixed = observed(C.PASSED, ("t.py::add", T.PASSED), ("t.py::mul", T.PASSED))
    _, tests = classify(candidate, base, SideRuns(fix=fix, regression=fixed))
    assert {t.test_id: t.classification for t in tests} == {"t.py::add": K.FAIL_TO_PASS,
                                                            "t.py::mul": K.PASS_TO_PASS}


def test_a_test_sharpened_by_the_patch_whose_base_version_fails_with_its_code_is_no_fix(
        ) -> None:
    """The base's version passed on the base; the patch's fails there and passes with the
    patch, but the base's version fails with the patch's code: named for review, not shown."""
    base = observed(C.PASSED, ("t.py::x", T.PASSED))
    candidate = observed(C.PASSED, ("t.py::x", T.PASSED))
    fix = observed(C.FAILED, ("t.py::x", T.FAILED))
    regression = observed(C.FAILED, ("t.py::x", T.FAILED))
    _, tests = classify(candidate, base, SideRuns(fix=fix, regression=regression,
                                                  changed_files=frozenset({"t.py"})))
    (test,) = tests
    assert (test.classification, test.expectations_changed) == (K.PASS_TO_PASS, True)


def test_a_new_test_rests_on_the_fix_evidence_alone() -> None:
    """A new test has no base version for the regression evidence to run, so a pass forged
    beside the patch's code stays FAIL_TO_PASS here: the way around the rule above. What
    stops it is the runner's own checks (a passed report carrying a traceback, a changed
    reporting function: the candidate's check fails) and the judge's harness finding."""
    candidate = observed(C.PASSED, ("t_new.py::add", T.PASSED))
    fix = observed(C.FAILED, ("t_new.py::add", T.FAILED))
    regression = observed(C.PASSED)
    _, tests = classify(candidate, observed(C.PASSED), SideRuns(fix=fix, regression=regression))
    assert [(t.test_id, t.classification) for t in tests] == [("t_new.py::add", K.FAIL_TO_PASS)]


# --- stable identity ----------------------------------------------------------------------

def test_parametrized_ids_drawn_at_collection_are_the_same_test_by_position() -> None:
    base = observed(C.PASSED, ("t.py::f[a-1796630016.15]", T.PASSED),
                    ("t.py::f[b-1796630016.16]", T.PASSED), ("t.py::g[x]", T.PASSED))
    candidate = observed(C.PASSED, ("t.py::f[a-1796630099.01]", T.PASSED),
                         ("t.py::f[b-1796630099.02]", T.PASSED), ("t.py::g[x]", T.PASSED))
    assert [r.test_id for r in aligned(candidate, base).report.results] == [  # type: ignore[union-attr]
        "t.py::f[a-1796630016.15]", "t.py::f[b-1796630016.16]", "t.py::g[x]"]
    _, tests = classify(candidate, base)
    assert {t.classification for t in tests} == {K.PASS_TO_PASS}


def test_a_parametrization_that_is_gone_is_still_missing() -> None:
    base = observed(C.PASSED, ("t.py::f[1]", T.PASSED), ("t.py::f[2]", T.PASSED))
    candidate = observed(C.PASSED, ("t.py::f[9]", T.PASSED))
    _, tests = classify(candidate, base)
    assert sorted((t.test_id, t.classification) for t in tests) == [
        ("t.py::f[1]", K.PASS_TO_PASS), ("t.py::f[2]", K.PASS_TO_MISSING)]


# --- flaky blame --------------------------------------------------------------------------

@pytest.mark.parametrize(("clean_base_runs", "expected"), [(1, K.FLAKY), (4, K.FLAKY),
                                                           (5, K.PASS_TO_FLAKY)])
def test_the_patch_is_blamed_for_a_flaky_test_only_after_enough_clean_base_runs(
        clean_base_runs: int, expected: K) -> None:
    candidate = observed(C.FAILED, ("t::x", T.FAILED), reruns={"t::x": (T.PASSED,)})
    base = observed(C.PASSED, ("t::x", T.PASSED),
                    reruns={"t::x": (T.PASSED,) * (clean_base_runs - 1)})
    _, (test,) = classify(candidate, base)
    assert test.classification is expected


@pytest.mark.parametrize(("clean_base_runs", "expected"), [(5, K.FLAKY), (7, K.FLAKY),
                                                           (8, K.PASS_TO_FLAKY)])
def test_a_patch_that_took_more_than_five_reruns_to_flip_needs_as_many_clean_base_runs(
        clean_base_runs: int, expected: K) -> None:
    """It failed its first run and six reruns, and passed the seventh: eight runs to flip, so
    five clean base runs (the floor) do not blame it, eight do."""
    candidate = observed(C.FAILED, ("t::x", T.FAILED),
                         reruns={"t::x": (T.FAILED,) * 6 + (T.PASSED,)})
    base = observed(C.PASSED, ("t::x", T.PASSED),
                    reruns={"t::x": (T.PASSED,) * (clean_base_runs - 1)})
    assert flips_to_check_on_base(candidate, base) == (() if clean_base_runs >= 8 else ("t::x",))
    _, (test,) = classify(candidate, base)
    assert test.classification is expected


def test_a_test_the_patch_sharpened_to_catch_the_bug_shows_the_fix() -> None:
    """The base's version of the test passed (it missed the bug); the patch's version fails on
    the base's code and passes with the fix: the same test file both times, so FAIL_TO_PASS
    (SWE-bench's test patch on the base)."""
    candidate = observed(C.PASSED, ("t.py::renames", T.PASSED), ("t.py::other", T.PASSED))
    base = observed(C.PASSED, ("t.py::renames", T.PASSED), ("t.py::other", T.PASSED))
    fix = observed(C.FAILED, ("t.py::renames", T.FAILED), ("t.py::other", T.PASSED))
    _, tests = classify(candidate, base, SideRuns(fix=fix, regression=base,
                                                  changed_files=frozenset({"t.py"})))
    assert {t.test_id: (t.classification, t.base) for t in tests} == {
        "t.py::renames": (K.FAIL_TO_PASS, T.PASSED), "t.py::other": (K.PASS_TO_PASS, T.PASSED)}


def test_the_baseline_link_says_when_the_patchs_sides_ran_beside_the_bases() -> None:
    from dataclasses import replace

    from tests.unit.test_verdict_baseline import BASE, check, classified_test, decide, report

    plain = check(classified_test(K.FAIL_TO_PASS, "t::a"), classification=K.FAIL_TO_PASS)
    sided = replace(plain, evidence_runs=("fix evidence", "regression evidence"))
    for checked, said in ((plain, False), (sided, True)):
        decision = decide(verification=report(checked))
        (link,) = [link for link in decision.chain if link.check == "baseline"]
        assert link.detail.startswith(f"on base {BASE[:12]}")
        assert ("each side of the patch beside the other's base" in link.detail) is said


def test_a_test_patchs_tests_are_judged_in_its_version_never_the_agents() -> None:
    """With a task's test patch, its file's tests are classed by the fix evidence (the base's
    code under it) against the regression evidence (the patch's code under it): the agent's
    own passing copy of `sub` counts for nothing, and a test the test patch removed is not
    missing."""
    base = observed(C.PASSED, ("t.py::add", T.PASSED), ("t.py::old", T.PASSED),
                    ("u.py::mul", T.PASSED))
    candidate = observed(C.PASSED, ("t.py::add", T.PASSED), ("t.py::sub", T.PASSED),
                         ("u.py::mul", T.PASSED))
    fix = observed(C.FAILED, ("t.py::add", T.PASSED), ("t.py::sub", T.FAILED),
                   ("u.py::mul", T.PASSED))
    sides = SideRuns(fix=fix, supplied_files=frozenset({"t.py"}))
    fixed = observed(C.PASSED, ("t.py::add", T.PASSED), ("t.py::sub", T.PASSED),
                     ("u.py::mul", T.PASSED))
    _, tests = classify(candidate, base, replace(sides, regression=fixed))
    assert {t.test_id: (t.classification, t.base) for t in tests} == {
        "t.py::add": (K.PASS_TO_PASS, T.PASSED), "t.py::sub": (K.FAIL_TO_PASS, T.FAILED),
        "u.py::mul": (K.PASS_TO_PASS, T.PASSED)}
    unfixed = observed(C.FAILED, ("t.py::add", T.PASSED), ("t.py::sub", T.FAILED),
                       ("u.py::mul", T.PASSED))
    whole, tests = classify(candidate, base, replace(sides, regression=unfixed))
    assert {t.test_id: t.classification for t in tests}["t.py::sub"] is K.FAIL_TO_FAIL
    assert whole is K.FAIL_TO_FAIL
