"""A check's evidence must agree with itself, and the runner is not the project's to change:
real pytest and unittest projects whose code or tests try to turn a failure into a pass, run
through run_check with agentctl's report plugins."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from agentctl.domain.enums import TestOutcome as T
from agentctl.domain.enums import VerificationCheckStatus as C
from agentctl.domain.spec import PlannedCheck
from agentctl.execution.verification.test_reports import ReportDir
from agentctl.execution.verification.verifier import CheckOutcome, run_check

PYTHON = shlex.quote(sys.executable)
PYTEST = f"{PYTHON} -m pytest -q -p no:cacheprovider"
DISCOVER = f"{PYTHON} -m unittest discover -s tests -t ."

BUGGY_CALC = "def add(a, b):\n    return a - b\n"
CALC_TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_zero():\n    assert add(0, 0) == 0\n")
CALC_CASE = ("import unittest\n\nfrom calc import add\n\n\n"
             "class AddTest(unittest.TestCase):\n"
             "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n")


def checked(tmp_path: Path, files: dict[str, str], command: str) -> CheckOutcome:
    """`command` run as a check in `tmp_path/proj` holding `files`, with the report plugins."""
    workspace = tmp_path / "proj"
    for path, text in files.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text)
    return run_check(PlannedCheck(name="t", command=command), workspace=workspace,
                     env={"PATH": "/usr/bin:/bin"}, log_path=tmp_path / "t.log",
                     infra_patterns=(), reports=ReportDir(tmp_path / "reports"))


def test_a_makefile_recipe_whose_failing_pytest_make_ignores_is_failed(tmp_path: Path) -> None:
    outcome = checked(tmp_path, {
        "Makefile": f"test:\n\t-{PYTHON} -m pytest -q -p no:cacheprovider tests\n",
        "calc.py": BUGGY_CALC, "tests/test_calc.py": CALC_TESTS,
    }, "PYTHONPATH=. make test")

    assert outcome.exit_code == 0
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert "the evidence disagrees: exit code 0, but the log says 1 failed, 1 passed" in \
        outcome.summarized_failure
    assert outcome.failing_tests[0].startswith("tests/test_calc.py::test_add")


def test_production_code_that_exits_zero_at_exit_under_pytest_is_failed(tmp_path: Path) -> None:
    outcome = checked(tmp_path, {
        "calc.py": ("import atexit\nimport os\nimport sys\n\n"
                    "if 'pytest' in sys.modules:\n    atexit.register(os._exit, 0)\n\n"
                    + BUGGY_CALC),
        "test_calc.py": CALC_TESTS,
    }, PYTEST)

    assert outcome.exit_code == 0
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert "the evidence disagrees: exit code 0, but the log says 1 failed" in \
        outcome.summarized_failure


def test_a_test_module_that_deletes_the_report_and_exits_zero_is_failed(tmp_path: Path) -> None:
    """The report is read through agentctl's own descriptor: deleting every file beside the
    plugin (and whatever the variables name) at exit changes nothing."""
    attack = (
        "import atexit, os, sys\n\n"
        "def _hide():\n"
        "    for name in ('AGENTCTL_TEST_REPORT', 'TEST_OUTCOMES_FILE'):\n"
        "        if os.environ.get(name):\n"
        "            os.remove(os.environ[name])\n"
        "    for folder in sys.path:\n"
        "        if folder and os.path.isfile(os.path.join(folder, 'sitecustomize.py')):\n"
        "            for name in os.listdir(folder):\n"
        "                if name.endswith(('.json', '.tsv', '.xml')):\n"
        "                    os.remove(os.path.join(folder, name))\n"
        "    os._exit(0)\n\n"
        "atexit.register(_hide)\n\n"
        "def test_nothing():\n    pass\n")
    outcome = checked(tmp_path, {"calc.py": BUGGY_CALC, "test_calc.py": CALC_TESTS,
                                 "test_zz_exit.py": attack}, PYTEST)

    assert outcome.exit_code == 0
    assert outcome.status is C.FAILED
    assert outcome.test_report is not None
    assert outcome.test_report.outcome_of("test_calc.py::test_add") is T.FAILED
    assert not (tmp_path / "reports" / "pytest-results.json").exists()


def test_code_that_wraps_pytest_report_construction_is_failed_naming_it(tmp_path: Path) -> None:
    forge = (
        "import _pytest.reports\n\n"
        "_real = _pytest.reports.TestReport.from_item_and_call\n\n"
        "def _passing(item, call):\n"
        "    report = _real(item, call)\n"
        "    report.outcome, report.longrepr = 'passed', None\n"
        "    return report\n\n"
        "_pytest.reports.TestReport.from_item_and_call = staticmethod(_passing)\n\n")
    outcome = checked(tmp_path, {"calc.py": forge + BUGGY_CALC, "test_calc.py": CALC_TESTS},
                      PYTEST)

    assert outcome.exit_code == 0  # pytest itself was fooled
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        "failed: the test runner was changed during the run: "
        "_pytest.reports.TestReport.from_item_and_call")
    assert outcome.test_report is None  # a changed runner's report is no evidence


@pytest.mark.parametrize(("forge", "named", "tests"), [
    ("import _pytest.runner\n\n_real = _pytest.runner.CallInfo.from_call.__func__\n\n"
     "def _calm(cls, func, when, reraise=None):\n"
     "    info = _real(cls, func, when, reraise)\n"
     "    info.excinfo = None\n"
     "    return info\n\n"
     "_pytest.runner.CallInfo.from_call = classmethod(_calm)\n\n",
     "_pytest.runner.CallInfo.from_call", CALC_TESTS),
    ("import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n\n",
     "_pytest.python.Function.runtest", CALC_TESTS),
    ("import _pytest.unittest\n\n_pytest.unittest.TestCaseFunction.runtest = "
     "lambda self: None\n\n", "_pytest.unittest.TestCaseFunction.runtest", CALC_CASE),
], ids=["exception swallowed", "test body skipped", "unittest class's body skipped"])
def test_code_that_keeps_a_failing_test_from_failing_is_failed_naming_it(
        tmp_path: Path, forge: str, named: str, tests: str) -> None:
    """No report is touched: the exception is caught before a report is made, or the test's
    body never runs, so the report says passed without a traceback."""
    outcome = checked(tmp_path, {"calc.py": forge + BUGGY_CALC, "test_calc.py": tests}, PYTEST)

    assert outcome.exit_code == 0  # pytest itself was fooled
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        f"failed: the test runner was changed during the run: {named}")


def test_a_conftest_hook_that_turns_a_failure_into_a_pass_is_failed_naming_it(
        tmp_path: Path) -> None:
    """A hook changes only the outcome of the report pytest made: it still carries the
    failure's traceback, which pytest never puts on a passed report."""
    forge = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
             "def pytest_runtest_makereport(item, call):\n"
             "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")
    outcome = checked(tmp_path, {"calc.py": BUGGY_CALC, "conftest.py": forge,
                                 "test_calc.py": CALC_TESTS}, PYTEST)

    assert outcome.exit_code == 0  # pytest itself was fooled
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        "failed: the test runner was changed during the run: pytest_runtest_makereport (a "
        "report said passed with a failure's traceback)")


def test_a_test_that_ends_its_process_early_is_failed(tmp_path: Path) -> None:
    outcome = checked(tmp_path, {
        "test_calc.py": "import os\n\n\ndef test_leave():\n    os._exit(0)\n"}, PYTEST)

    assert outcome.exit_code == 0
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        "failed: the test process ended before its report was complete")


def test_unittest_exit_handlers_cleared_in_the_test_package_is_failed(tmp_path: Path) -> None:
    outcome = checked(tmp_path, {
        "tests/__init__.py": "import atexit\n\natexit._clear()\n",
        "tests/test_calc.py": ("import unittest\n\n\nclass T(unittest.TestCase):\n"
                               "    def test_ok(self):\n        pass\n"),
    }, DISCOVER)

    assert outcome.exit_code == 0
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        "failed: the test process ended before its report was complete")


def test_unittest_result_methods_changed_by_the_code_are_named(tmp_path: Path) -> None:
    outcome = checked(tmp_path, {
        "calc.py": ("from unittest.result import TestResult\n\n"
                    "TestResult.addFailure = lambda self, test, err: "
                    "TestResult.addSuccess(self, test)\n\n" + BUGGY_CALC),
        "tests/__init__.py": "",
        "tests/test_calc.py": CALC_CASE,
    }, DISCOVER)

    assert outcome.exit_code == 0  # unittest itself was fooled
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert "the test runner was changed during the run: " \
        "unittest.result.TestResult.addFailure" in outcome.summarized_failure


@pytest.mark.parametrize(("forge", "named"), [
    ("import contextlib\nimport unittest.case\n\n\n@contextlib.contextmanager\n"
     "def _calm(self, test_case, subTest=False):\n"
     "    try:\n        yield\n    except Exception:\n        pass\n\n\n"
     "unittest.case._Outcome.testPartExecutor = _calm\n\n",
     "unittest.case._Outcome.testPartExecutor"),
    ("import unittest.case\n\nunittest.case.TestCase._callTestMethod = "
     "lambda self, method: None\n\n", "unittest.case.TestCase._callTestMethod"),
], ids=["exception swallowed", "test body skipped"])
def test_code_that_keeps_a_failing_unittest_from_failing_is_named(
        tmp_path: Path, forge: str, named: str) -> None:
    outcome = checked(tmp_path, {
        "calc.py": forge + BUGGY_CALC,
        "tests/__init__.py": "",
        "tests/test_calc.py": CALC_CASE,
    }, DISCOVER)

    assert outcome.exit_code == 0  # unittest itself was fooled
    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert f"the test runner was changed during the run: {named}" in outcome.summarized_failure


def test_unittest_result_methods_silenced_before_any_test_is_recorded_are_named(
        tmp_path: Path) -> None:
    """The test package turns every result into nothing before the first test: no test is
    ever recorded, and what changed is said all the same."""
    outcome = checked(tmp_path, {
        "calc.py": BUGGY_CALC,
        "tests/__init__.py": ("from unittest.result import TestResult\n\n"
                              "TestResult.addFailure = lambda self, test, err: None\n"
                              "TestResult.addSuccess = lambda self, test: None\n"),
        "tests/test_calc.py": CALC_CASE,
    }, DISCOVER)

    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert "the test runner was changed during the run: " in outcome.summarized_failure
    assert "unittest.result.TestResult.addFailure" in outcome.summarized_failure


def test_a_passing_unittest_and_pytest_run_still_pass_with_their_reports(tmp_path: Path) -> None:
    fixed = "def add(a, b):\n    return a + b\n"
    outcome = checked(tmp_path, {"calc.py": fixed, "test_calc.py": CALC_TESTS,
                                 "test_u.py": ("import unittest\n\n\nclass U(unittest.TestCase):\n"
                                               "    def test_u(self):\n        pass\n")},
                      f"{PYTEST} && {PYTHON} -m unittest test_u")

    assert (outcome.status, outcome.summarized_failure) == (C.PASSED, None)
    assert outcome.test_report is not None
    assert outcome.test_report.outcome_of("test_calc.py::test_add") is T.PASSED


def test_no_variable_inside_a_check_names_agentctl(tmp_path: Path) -> None:
    """The plugins take their variables out of the environment before the project's code
    runs, and none of the names or values a test can see says agentctl."""
    probe = (
        "import os\n\n\ndef test_env():\n"
        "    seen = {k: v for k, v in os.environ.items()\n"
        "            if 'agentctl' in (k + v).lower() or k.startswith('TEST_')}\n"
        "    assert seen == {}\n")
    outcome = checked(tmp_path, {"test_env.py": probe}, PYTEST)

    assert (outcome.status, outcome.summarized_failure) == (C.PASSED, None)
    assert outcome.test_report is not None
    assert outcome.test_report.outcome_of("test_env.py::test_env") is T.PASSED


def rerun(tmp_path: Path, files: dict[str, str], command: str,
          wanted: tuple[str, ...]) -> CheckOutcome:
    """`command` as a rerun of the `wanted` tests, each failing one rerun in process."""
    from agentctl.execution.verification.test_reports import Selection

    workspace = tmp_path / "proj"
    for path, text in files.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text)
    return run_check(PlannedCheck(name="t", command=command), workspace=workspace,
                     env={"PATH": "/usr/bin:/bin"}, log_path=tmp_path / "t.log",
                     infra_patterns=(), reports=ReportDir(tmp_path / "reports"),
                     select=Selection(only=wanted), rerun_failures=2)


def test_no_variable_inside_a_rerun_names_agentctl_or_its_selection(tmp_path: Path) -> None:
    """A rerun names its tests through a file and reruns them in process: neither the pytest
    plugins' variables nor the unittest hook's are left for the project's code to see."""
    probe = ("import os\n\n\ndef test_env():\n"
             "    seen = {k: v for k, v in os.environ.items()\n"
             "            if 'agentctl' in (k + v).lower() or k.startswith('TEST_')}\n"
             "    assert seen == {}\n\n\ndef test_other():\n    assert False\n")
    outcome = rerun(tmp_path / "pytest", {"test_env.py": probe}, PYTEST,
                    ("test_env.py::test_env",))
    assert (outcome.status, outcome.summarized_failure) == (C.PASSED, None)
    assert outcome.test_report is not None
    assert [r.test_id for r in outcome.test_report.results] == ["test_env.py::test_env"]

    unittest_probe = (
        "import os\nimport unittest\n\n\nclass T(unittest.TestCase):\n"
        "    def test_env(self):\n"
        "        seen = {k: v for k, v in os.environ.items()\n"
        "                if 'agentctl' in (k + v).lower() or k.startswith('TEST_LOG')\n"
        "                or k == 'TEST_OUTCOMES_LOG'}\n"
        "        self.assertEqual(seen, {})\n\n"
        "    def test_other(self):\n        self.fail()\n")
    outcome = rerun(tmp_path / "unittest", {"test_u.py": unittest_probe},
                    f"{PYTHON} -m unittest", ("test_u.T.test_env",))
    assert (outcome.status, outcome.summarized_failure) == (C.PASSED, None)
    assert outcome.test_report is not None
    assert [r.test_id for r in outcome.test_report.results] == ["test_u.T.test_env"]


def test_unittest_methods_changed_under_in_process_reruns_are_still_named(
        tmp_path: Path) -> None:
    """The hook wraps the suite it reruns failing tests in before it notes the runner's
    functions: its own reruns change nothing noted, a test's change is still named."""
    tests = ("import unittest\n\n\nclass T(unittest.TestCase):\n"
             "    def test_fails(self):\n        self.assertEqual(1, 2)\n\n"
             "    def test_forges(self):\n"
             "        from unittest.result import TestResult\n"
             "        TestResult.addFailure = lambda self, test, err: None\n")
    outcome = rerun(tmp_path, {"test_u.py": tests}, f"{PYTHON} -m unittest",
                    ("test_u.T.test_fails", "test_u.T.test_forges"))

    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        "failed: the test runner was changed during the run: "
        "unittest.result.TestResult.addFailure")


def test_under_xdist_the_selection_and_the_report_still_reach_the_workers(
        tmp_path: Path) -> None:
    from agentctl.execution.verification.test_reports import Selection

    workspace = tmp_path / "proj"
    workspace.mkdir()
    (workspace / "calc.py").write_text(BUGGY_CALC)
    (workspace / "test_calc.py").write_text(CALC_TESTS)
    outcome = run_check(PlannedCheck(name="t", command=f"{PYTEST} -n 2"), workspace=workspace,
                        env={"PATH": "/usr/bin:/bin"}, log_path=tmp_path / "t.log",
                        infra_patterns=(), reports=ReportDir(tmp_path / "reports"),
                        select=Selection(only=("test_calc.py::test_add",)))

    assert outcome.status is C.FAILED
    assert outcome.test_report is not None
    assert [(r.test_id, r.outcome) for r in outcome.test_report.results] == [
        ("test_calc.py::test_add", T.FAILED)]


def test_under_xdist_a_worker_whose_runner_was_changed_is_named(tmp_path: Path) -> None:
    """The project's code runs in the workers: each compares its own runner and tells the main
    process, which writes the report."""
    forge = ("import _pytest.runner\n\n_real = _pytest.runner.call_and_report\n"
             "_pytest.runner.call_and_report = lambda *a, **k: _real(*a, **k)\n\n")
    outcome = checked(tmp_path, {"calc.py": forge + BUGGY_CALC, "test_calc.py": CALC_TESTS},
                      f"{PYTEST} -n 2")

    assert outcome.status is C.FAILED
    assert outcome.summarized_failure is not None
    assert outcome.summarized_failure.endswith(
        "failed: the test runner was changed during the run: _pytest.runner.call_and_report")


def test_a_forked_worker_that_records_tests_and_ends_with_os_exit_is_no_unfinished_report(
        tmp_path: Path) -> None:
    """multiprocessing's forked workers (Django's parallel runner) record results and end with
    os._exit: only the process that began the report finishes it."""
    suite = (
        "import os\nimport unittest\n\n\nclass T(unittest.TestCase):\n"
        "    def test_in_a_worker(self):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            unittest.TestResult().addSuccess(self)\n"
        "            os._exit(0)\n"
        "        self.assertEqual(os.waitpid(pid, 0)[1], 0)\n")
    outcome = checked(tmp_path, {"test_fork.py": suite}, f"{PYTHON} -m unittest -v test_fork")

    assert (outcome.status, outcome.summarized_failure) == (C.PASSED, None)
