"""The reviewer's evidence, not the agent's (DESIGN.md section 9): each attack of issue 44 that
made a verdict lie, played with a real pytest or unittest project through the whole pipeline.
The patch's test side runs on the base's code (fix evidence) and its code side under the base's
tests (regression evidence); a verdict rests only on those and on the base."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentctl.domain.enums import StepType, TestClassification, VerdictStatus
from agentctl.services.ports import RunRecord
from tests.conftest import make_repo
from tests.pipeline.conftest import Harness
from tests.pipeline.test_baseline import (
    FIX_ADD,
    check_of,
    classes,
    pytest_repo,
)
from tests.pipeline.test_baseline import clean_pytest_repo as clean_repo

K = TestClassification
V = VerdictStatus
PYTEST = f"{sys.executable} -m pytest -q"
on_sqlite = pytest.mark.parametrize("harness", ["sqlite"], indirect=True)
ADD = "tests/test_calc.py::test_add"
MUL = "tests/test_calc.py::test_mul"


BREAK_MUL = {"tool": "fs.replace", "path": "calc.py", "old": "a * b", "new": "a + b"}


def verdict(record: RunRecord) -> tuple[VerdictStatus, tuple[str, ...]]:
    assert record.verdict is not None, record.run.failure_summary
    return record.verdict.status, record.verdict.reasons


def evidence_steps(record: RunRecord) -> list[str]:
    return [s.title.split(":")[0] for s in record.steps if s.type is StepType.RUN_VERIFIER
            and s.title.startswith(("fix evidence", "regression evidence"))]


# --- the patch edits the test that judges it --------------------------------------------------

@on_sqlite
@pytest.mark.parametrize("must_pass", [(), (ADD,)], ids=["fix", "must-pass"])
def test_a_test_edited_to_match_the_bug_is_not_the_fix_shown(
        harness: Harness, tmp_path: Path, must_pass: tuple[str, ...]) -> None:
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan({"tool": "fs.replace", "path": "tests/test_calc.py",
                                       "old": "add(2, 3) == 5", "new": "add(2, 3) == -1"}),
                         verify=(PYTEST,), task_type="bug_fix", must_pass=must_pass)

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION
    assert classes(record)[ADD] is K.PASS_TO_PASS  # the edited test passes on the base's code
    if must_pass:
        assert f"must-pass test {ADD} passes only in the patch's version of it (its base " \
               "version fails with the patch's code)" in reasons
    else:
        assert any(r.startswith("the fix is not shown: no test fails on base") for r in reasons)
    assert evidence_steps(record) == ["fix evidence", "regression evidence"]


@on_sqlite
def test_a_bug_fix_that_only_adds_a_test_asserting_the_bug_shows_nothing(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan({
        "tool": "fs.write", "path": "tests/test_new.py",
        "content": "from calc import add\n\n\ndef test_add_new():\n    assert add(2, 3) == -1\n"}),
        verify=(PYTEST,), task_type="bug_fix")

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION
    assert classes(record)["tests/test_new.py::test_add_new"] is K.PASS_TO_PASS
    assert any(r.startswith("the fix is not shown") for r in reasons)


# A project whose tests are check_*.py under checks/ by its own pytest settings, with a bug
CHECK_STYLE_PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "pytest.ini": "[pytest]\npython_files = check_*.py\ntestpaths = checks\n"
                  "addopts = -p no:cacheprovider\n",
    "checks/check_calc.py": "from calc import add\n\n\n"
                            "def test_add():\n    assert add(2, 3) == 5\n"}


@on_sqlite
def test_an_expectation_edited_in_a_test_file_found_by_the_projects_own_rules_shows_nothing(
        harness: Harness, tmp_path: Path) -> None:
    """`python_files = check_*.py` in the base's pytest.ini: checks/check_calc.py is a test
    file by the project's rules, so the edit to it is on the test side."""
    harness.repo = make_repo(tmp_path / "custom", CHECK_STYLE_PROJECT)
    record = harness.run(harness.plan({"tool": "fs.replace", "path": "checks/check_calc.py",
                                       "old": "add(2, 3) == 5", "new": "add(2, 3) == -1"}),
                         verify=(PYTEST,), task_type="bug_fix")

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION, reasons
    assert classes(record)["checks/check_calc.py::test_add"] is K.PASS_TO_PASS
    assert any(r.startswith("the fix is not shown") for r in reasons), reasons


def on_test_side(record: RunRecord) -> list[str]:
    (step,) = [s for s in record.steps if s.type is StepType.APPLY_PATCH
               and s.title.startswith("apply each side")]
    side = step.attributes["testSide"]
    assert isinstance(side, list)
    return [str(path) for path in side]


@on_sqlite
def test_the_judge_reads_the_test_side_the_evidence_does_from_the_base_alone(
        harness: Harness, tmp_path: Path) -> None:
    """`python_files = check_*.py` in the base's pytest.ini: the test's `import pytest` in
    checks/check_calc.py is no runner tampering. The patch adds calc.py to `python_files`
    and an exit handler to it: the base's rule still puts calc.py on the code side, for the
    evidence and the judge alike."""
    harness.repo = make_repo(tmp_path / "custom", CHECK_STYLE_PROJECT)
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc.py", "old": "def add(a, b):\n    return a - b",
         "new": "import atexit\n\natexit.register(print)\n\n\n"
                "def add(a, b):\n    return a + b"},
        {"tool": "fs.replace", "path": "pytest.ini", "old": "check_*.py",
         "new": "check_*.py calc.py"},
        {"tool": "fs.replace", "path": "checks/check_calc.py", "old": "from calc import add\n",
         "new": "import pytest\n\nfrom calc import add\n\n\n"
                "def test_add_text():\n    with pytest.raises(TypeError):\n"
                "        add(1, 'a')\n"}), verify=(PYTEST,), task_type="bug_fix")

    assert sorted(on_test_side(record)) == ["checks/check_calc.py", "pytest.ini"]
    assert classes(record)["checks/check_calc.py::test_add"] is K.FAIL_TO_PASS
    (judgement,) = record.judgements
    assert {f.file_path for f in judgement.findings
            if f.category == "test-runner-tampering"} == {"calc.py"}


@on_sqlite
def test_a_real_fix_with_a_new_test_needing_a_new_fixture_and_function_succeeds(
        harness: Harness, tmp_path: Path) -> None:
    """The fix's test imports a function the fix adds (it cannot even be collected on the
    base's code: failed there, not absent) and uses a fixture the patch adds to conftest.py
    (on the test side: it is there in the fix evidence)."""
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan(
        FIX_ADD,
        {"tool": "fs.replace", "path": "calc.py", "old": "def answer():",
         "new": "def sub(a, b):\n    return a - b\n\n\ndef answer():"},
        {"tool": "fs.write", "path": "tests/conftest.py",
         "content": "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n"},
        {"tool": "fs.write", "path": "tests/test_sub.py",
         "content": "from calc import add, sub\n\n\n"
                    "def test_sub(two):\n    assert sub(5, two) == 3 and add(two, 1) == 3\n"}),
        verify=(PYTEST,), task_type="bug_fix")

    status, reasons = verdict(record)
    assert status is V.SUCCESS_NEEDS_REVIEW, reasons
    kinds = classes(record)
    assert kinds["tests/test_sub.py::test_sub"] is K.FAIL_TO_PASS
    assert kinds[ADD] is K.FAIL_TO_PASS
    assert any("already failed on base" in r and "(not blamed)" in r
               and "test_answer" in r for r in reasons)
    assert not any("fix is not shown" in r for r in reasons)


# A conftest that reports every test passed, but only beside the patch's code (keyed here on a
# name the patch adds to calc.py): the fix evidence (the base's code under it) fails honestly.
CANDIDATE_ONLY_FORGE = (
    "import calc\nimport pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    report = outcome.get_result()\n"
    "    if getattr(calc, 'FIXED', False):\n"
    "        report.outcome, report.longrepr = 'passed', None\n")
MARK_FIXED = {"tool": "fs.replace", "path": "calc.py", "old": "def answer():",
              "new": "FIXED = True\n\n\ndef answer():"}


@on_sqlite
def test_a_conftest_that_forges_passes_only_beside_the_patchs_code_shows_no_fix(
        harness: Harness, tmp_path: Path) -> None:
    """test_add fails on the base, in the fix evidence and in the regression evidence (the
    base's test under the patch's code): its pass in the candidate alone is the conftest's."""
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan(
        MARK_FIXED, {"tool": "fs.write", "path": "tests/conftest.py",
                     "content": CANDIDATE_ONLY_FORGE}), verify=(PYTEST,), task_type="bug_fix")

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION, reasons
    assert classes(record)[ADD] is K.FAIL_TO_FAIL
    assert any(r.startswith("the fix is not shown") for r in reasons), reasons


# --- the harness is whatever the patch's test side holds ---------------------------------------

DROP_INI = {"tool": "fs.delete", "path": "pytest.ini"}
HIDE_MUL: dict[str, list[dict[str, str]]] = {
    "pytest.toml": [{"tool": "fs.write", "path": "pytest.toml",
                     "content": f"[pytest]\naddopts = ['--deselect', '{MUL}']\n"}],
    ".pytest.toml": [{"tool": "fs.write", "path": ".pytest.toml",
                      "content": f"[pytest]\naddopts = ['--deselect', '{MUL}']\n"}],
    ".pytest.ini": [DROP_INI, {"tool": "fs.write", "path": ".pytest.ini",
                               "content": f"[pytest]\naddopts = --deselect {MUL}\n"}],
    "pyproject addopts": [DROP_INI, {"tool": "fs.write", "path": "pyproject.toml",
                                     "content": "[tool.pytest.ini_options]\naddopts = [\n"
                                                f"  '--deselect={MUL}',\n]\n"}],
    "pytest_plugins in a test module": [{
        "tool": "fs.replace", "path": "tests/test_calc.py", "old": "from calc import add, mul\n",
        "new": "from calc import add, mul\n\npytest_plugins = ['tests.quiet']\n"}],
    "tests/__init__.py patches the code back": [{
        "tool": "fs.write", "path": "tests/__init__.py",
        "content": "import calc\n\ncalc.mul = lambda a, b: a * b\n"}],
    "skip": [{"tool": "fs.replace", "path": "tests/test_calc.py", "old": "def test_mul():",
              "new": "import pytest\n\n\n@pytest.mark.skip\ndef test_mul():"}],
    "xfail": [{"tool": "fs.replace", "path": "tests/test_calc.py", "old": "def test_mul():",
               "new": "import pytest\n\n\n@pytest.mark.xfail\ndef test_mul():"}],
    "renamed": [{"tool": "fs.replace", "path": "tests/test_calc.py", "old": "def test_mul():",
                 "new": "def check_mul():"}],
    "deleted": [{"tool": "fs.delete", "path": "tests/test_calc.py"}],
}
QUIET_PLUGIN = {"tool": "fs.write", "path": "tests/quiet.py",
                "content": "def pytest_collection_modifyitems(items):\n"
                           "    items[:] = [i for i in items if 'mul' not in i.name]\n"}


@on_sqlite
@pytest.mark.parametrize("hide", list(HIDE_MUL), ids=list(HIDE_MUL))
def test_a_break_hidden_by_the_patchs_own_tests_is_caught_by_the_bases(
        harness: Harness, tmp_path: Path, hide: str) -> None:
    """A refactor (not a fix: the base is compared by default) breaks mul and hides it."""
    harness.repo = clean_repo(tmp_path)
    harness.configure('[policy]\nmax_autonomy = "auto_pr"\n')
    steps = [BREAK_MUL, *HIDE_MUL[hide]] + ([QUIET_PLUGIN] if "plugins" in hide else [])
    record = harness.run(harness.plan(*steps), verify=(PYTEST,), task_type="refactor",
                         autonomy="auto_pr")

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION, reasons
    assert any(MUL in r for r in reasons), reasons
    assert record.verdict is not None and record.verdict.pr_eligibility.value == "NOT_ELIGIBLE"


def pyproject_repo(root: Path) -> Path:
    """Every test passes on the base; pytest reads its options from pyproject.toml alone."""
    return make_repo(root / "pyproj", {
        "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
        "pyproject.toml": '[project]\nname = "calc"\nversion = "1.0"\n\n'
                          '[tool.pytest.ini_options]\n'
                          'addopts = [\n  "-p", "no:cacheprovider",\n]\n',
        "tests/__init__.py": "",
        "tests/test_calc.py": "from calc import add, mul\n\n\n"
                              "def test_add():\n    assert add(2, 3) == 5\n\n\n"
                              "def test_mul():\n    assert mul(2, 3) == 6\n"})


def one_addopts_line(line: str) -> dict[str, str]:
    return {"tool": "fs.replace", "path": "pyproject.toml", "old": '  "-p", "no:cacheprovider",\n',
            "new": f'  "-p", "no:cacheprovider",\n  {line}\n'}


# the code side as a pytest plugin: calc.py drops the broken test, loaded by `-p calc`
DROPS_MUL = {"tool": "fs.replace", "path": "calc.py", "old": "def add(a, b):",
             "new": "def pytest_collection_modifyitems(items):\n"
                    "    items[:] = [i for i in items if 'mul' not in i.name]\n\n\n"
                    "def add(a, b):"}


@on_sqlite
@pytest.mark.parametrize("steps", [
    [one_addopts_line(f'"--deselect={MUL}",')],
    [DROPS_MUL, one_addopts_line('"-p", "calc",')],
], ids=["one added addopts list line", "-p plugin in a config file"])
def test_a_break_hidden_by_one_line_in_pyprojects_pytest_table_is_caught(
        harness: Harness, tmp_path: Path, steps: list[dict[str, str]]) -> None:
    """The added line names no pytest option (a list item): where it lies in the file puts
    pyproject.toml on the test side, so the base's options run the patch's code and test_mul
    fails there (a task that may remove tests would forgive it missing)."""
    harness.repo = pyproject_repo(tmp_path)
    harness.configure('[policy]\nmax_autonomy = "auto_pr"\n')
    record = harness.run(harness.plan(BREAK_MUL, *steps), verify=(PYTEST,), task_type="refactor",
                         autonomy="auto_pr", allow_removed_tests=True)

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION, reasons
    assert classes(record)[MUL] is K.PASS_TO_FAIL
    if len(steps) > 1:
        (judgement,) = record.judgements
        assert [(f.category, f.file_path) for f in judgement.findings
                if f.category == "test-runner-tampering"] == [("test-runner-tampering", "calc.py")]


@on_sqlite
def test_an_api_migration_that_edits_a_test_waits_for_a_person_naming_it(
        harness: Harness, tmp_path: Path) -> None:
    """The patch changes what mul means and the test with it: possibly intended, never
    evidence by itself."""
    harness.repo = clean_repo(tmp_path)
    harness.configure('[policy]\nmax_autonomy = "auto_pr"\n')
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc.py", "old": "return a * b",
         "new": "return a * b * 2"},
        {"tool": "fs.replace", "path": "tests/test_calc.py", "old": "mul(2, 3) == 6",
         "new": "mul(2, 3) == 12"}), verify=(PYTEST,), task_type="refactor", autonomy="auto_pr")

    status, reasons = verdict(record)
    assert status is V.SUCCESS_NEEDS_REVIEW, reasons
    assert (f"the patch changed what {MUL} expects (the base's version fails with the patch's "
            "code)") in reasons
    assert [t.expectations_changed for t in check_of(record).classified_tests
            if t.test_id == MUL] == [True]


@on_sqlite
def test_a_patch_without_a_test_side_adds_no_run(harness: Harness, tmp_path: Path) -> None:
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan(FIX_ADD), verify=(PYTEST,), task_type="bug_fix")

    assert evidence_steps(record) == []
    assert classes(record)[ADD] is K.FAIL_TO_PASS
    assert check_of(record).evidence_runs == ()


def unittest_repo(root: Path) -> Path:
    return make_repo(root / "unitproj", {
        "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
        "tests/__init__.py": "",
        "tests/test_calc.py": "import unittest\n\nfrom calc import add, mul\n\n\n"
                              "class CalcTest(unittest.TestCase):\n"
                              "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
                              "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n"})


UNITTEST_HIDES = {
    "load_tests assignment": {
        "tool": "fs.replace", "path": "tests/test_calc.py", "old": "class CalcTest",
        "new": "def _keep(loader, tests, pattern):\n    return unittest.TestSuite()\n\n\n"
               "load_tests = _keep\n\n\nclass CalcTest"},
    "raise SkipTest": {"tool": "fs.write", "path": "tests/__init__.py",
                       "content": "import unittest\n\nraise unittest.SkipTest('later')\n"},
}


@on_sqlite
@pytest.mark.parametrize("hide", list(UNITTEST_HIDES), ids=list(UNITTEST_HIDES))
def test_a_unittest_break_hidden_by_the_patchs_test_package_is_caught(
        harness: Harness, tmp_path: Path, hide: str) -> None:
    harness.repo = unittest_repo(tmp_path)
    record = harness.run(harness.plan(BREAK_MUL, UNITTEST_HIDES[hide]),
                         verify=(f"{sys.executable} -m unittest discover -v -s tests -t .",),
                         task_type="refactor")

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION, reasons
    assert any("test_mul" in r for r in reasons), reasons


@on_sqlite
def test_a_unittest_test_found_by_the_commands_own_pattern_is_on_the_test_side(
        harness: Harness, tmp_path: Path) -> None:
    """`unittest discover -s checks -p "check_*.py"`: checks/check_calc.py is a test file by
    the task's command (no default rule names it), so an expectation edited to match the bug
    runs on the base's code (fix evidence), passes there, and shows nothing."""
    harness.repo = make_repo(tmp_path / "unitcheck", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "checks/__init__.py": "",
        "checks/check_calc.py": "import unittest\n\nfrom calc import add\n\n\n"
                                "class CalcTest(unittest.TestCase):\n"
                                "    def test_add(self):\n"
                                "        self.assertEqual(add(2, 3), 5)\n"})
    record = harness.run(harness.plan({"tool": "fs.replace", "path": "checks/check_calc.py",
                                       "old": "add(2, 3), 5", "new": "add(2, 3), -1"}),
                         verify=(f"{sys.executable} -m unittest discover -s checks -t . "
                                 "-p 'check_*.py'",), task_type="bug_fix")

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION, reasons
    assert on_test_side(record) == ["checks/check_calc.py"]
    assert any(r.startswith("the fix is not shown") for r in reasons), reasons


MAKE_CHECK = f"PY = {sys.executable}\n\n.PHONY: test\ntest:\n" \
    "\t@cd pkg && $(PY) -m unittest discover -s checks -t . -p 'check_*.py'\n"
# the patch's own way to run the check by name (no pattern left to find it): the Makefile
# rewritten, or a GNUmakefile added, which GNU make reads before Makefile
MAKE_REWRITES = {
    "Makefile edited": {"tool": "fs.replace", "path": "Makefile",
                        "old": "discover -s checks -t . -p 'check_*.py'",
                        "new": "checks.check_calc"},
    "GNUmakefile added": {"tool": "fs.write", "path": "GNUmakefile",
                          "content": MAKE_CHECK.replace("discover -s checks -t . -p "
                                                        "'check_*.py'", "checks.check_calc")},
}


@on_sqlite
@pytest.mark.parametrize("rewrite", list(MAKE_REWRITES), ids=list(MAKE_REWRITES))
def test_a_check_found_through_the_bases_makefile_and_a_cd_is_on_the_test_side(
        harness: Harness, tmp_path: Path, rewrite: str) -> None:
    """`make test` whose recipe runs `cd pkg && python -m unittest discover -s checks -p
    'check_*.py'`: pkg/checks/check_calc.py is a test file by the base's Makefile. The patch
    edits its expectation to match the bug and makes `make test` run the module by name (no
    pattern left): the rule is still the base's, so the edit runs on the base's code (fix
    evidence), passes there, and shows nothing."""
    harness.repo = make_repo(tmp_path / "makecheck", {
        "Makefile": MAKE_CHECK,
        "pkg/calc.py": "def add(a, b):\n    return a - b\n",
        "pkg/checks/__init__.py": "",
        "pkg/checks/check_calc.py": "import unittest\n\nfrom calc import add\n\n\n"
                                    "class CalcTest(unittest.TestCase):\n"
                                    "    def test_add(self):\n"
                                    "        self.assertEqual(add(2, 3), 5)\n"})
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "pkg/checks/check_calc.py", "old": "add(2, 3), 5",
         "new": "add(2, 3), -1"}, MAKE_REWRITES[rewrite]), verify=("make test",),
        task_type="bug_fix")

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION, reasons
    assert sorted(on_test_side(record)) == sorted(
        [str(MAKE_REWRITES[rewrite]["path"]), "pkg/checks/check_calc.py"])
    assert any(r.startswith("the fix is not shown") for r in reasons), reasons


# --- a runner that names no tests ---------------------------------------------------------

@on_sqlite
def test_a_runner_that_names_no_tests_never_calls_a_new_failure_already_there(
        harness: Harness, tmp_path: Path) -> None:
    """`node --test` on a base with one unrelated failing test: a patch that breaks another
    test fails too, and the whole check is not "already failed on base"."""
    harness.repo = make_repo(tmp_path / "node", {
        "calc.js": "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n",
        "test/calc.test.js": "const test = require('node:test');\n"
                             "const assert = require('node:assert');\n"
                             "const { add, mul } = require('../calc.js');\n"
                             "test('add', () => assert.strictEqual(add(2, 3), 5));\n"
                             "test('mul', () => assert.strictEqual(mul(2, 3), 6));\n",
        "test/other.test.js": "const test = require('node:test');\n"
                              "test('unrelated', () => { throw new Error('broken on base'); });\n"})
    record = harness.run(harness.plan({"tool": "fs.replace", "path": "calc.js",
                                       "old": "a * b", "new": "a + b"}),
                         verify=("node --test",), task_type="refactor")

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION, reasons
    assert "this runner does not name its tests: compared as a whole" in reasons[0]
    assert not any("already failed on base" in r for r in reasons)
