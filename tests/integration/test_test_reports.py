"""Per-test results read from what real runners write: pytest's injected JUnit report (coloured
output included), unittest's output with and without -v, JUnit XML a build tool left, and
`go test -json` events (go is not on every machine: its event format is fixed by its docs)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from agentctl.domain.ansi import strip_ansi
from agentctl.domain.enums import TestOutcome
from agentctl.domain.spec import PlannedCheck
from agentctl.execution.verification import test_reports
from agentctl.execution.verification.report_formats import first_assertion, parse_go_json, parse_unittest
from agentctl.execution.verification.test_reports import (
    EVERY_TEST,
    ReportDir,
    Selection,
    collect,
    injected_env,
    lifted_pythonpath,
    selection,
    sets_pythonpath,
)
from agentctl.execution.verification.verifier import CheckOutcome, run_check
from agentctl.services.attempts.spec import check_name

T = TestOutcome
UNITTEST_TESTS = """import unittest


class T(unittest.TestCase):
    def test_fails(self):
        self.assertEqual(1, 2)

    def test_passes(self):
        \"\"\"A docstring unittest prints on its own line.\"\"\"
        print("noise", end="")

    def test_errs(self):
        raise RuntimeError("boom")

    @unittest.skip("not today")
    def test_skipped(self):
        pass
"""


def run_unittest(tmp_path: Path, *flags: str) -> list[str]:
    (tmp_path / "test_u.py").write_text(UNITTEST_TESTS)
    result = subprocess.run([sys.executable, "-m", "unittest", *flags, "test_u"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=60)  # one stream, as a command log has it
    return result.stdout.splitlines()


def test_unittest_verbose_output_names_every_test_and_its_first_error_line(
        tmp_path: Path) -> None:
    run = parse_unittest(iter(run_unittest(tmp_path, "-v")))
    assert {r.test_id: (r.outcome, r.message) for r in run.results} == {
        "test_u.T.test_fails": (T.FAILED, "AssertionError: 1 != 2"),
        "test_u.T.test_passes": (T.PASSED, None),
        "test_u.T.test_errs": (T.ERROR, "RuntimeError: boom"),
        "test_u.T.test_skipped": (T.SKIPPED, None)}
    assert (run.unnamed_passed, run.unnamed_skipped) == (0, 0)


def test_quiet_unittest_names_the_failures_and_counts_the_rest(tmp_path: Path) -> None:
    run = parse_unittest(iter(run_unittest(tmp_path)))
    assert {r.test_id: r.outcome for r in run.results} == {
        "test_u.T.test_fails": T.FAILED, "test_u.T.test_errs": T.ERROR}
    assert (run.unnamed_passed, run.unnamed_skipped) == (1, 1)


def test_go_test_json_events_give_each_tests_last_outcome_and_message() -> None:
    lines = [
        '{"Action":"run","Package":"example.com/calc","Test":"TestAdd"}',
        '{"Action":"output","Package":"example.com/calc","Test":"TestAdd",'
        '"Output":"    calc_test.go:9: add(2, 3) = -1, want 5\\n"}',
        '{"Action":"fail","Package":"example.com/calc","Test":"TestAdd","Elapsed":0}',
        '{"Action":"pass","Package":"example.com/calc","Test":"TestMul","Elapsed":0}',
        '{"Action":"skip","Package":"example.com/calc","Test":"TestSlow","Elapsed":0}',
        '{"Action":"fail","Package":"example.com/calc","Elapsed":0.01}',
        "FAIL\texample.com/calc\t0.01s",
    ]
    assert {(r.test_id, r.outcome, r.message) for r in parse_go_json(iter(lines))} == {
        ("example.com/calc::TestAdd", T.FAILED, "add(2, 3) = -1, want 5"),
        ("example.com/calc::TestMul", T.PASSED, None),
        ("example.com/calc::TestSlow", T.SKIPPED, None)}


def test_a_junit_file_a_build_tool_writes_during_the_run_is_read_and_a_stale_one_is_not(
        tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    reports_dir = workspace / "target" / "surefire-reports"
    reports_dir.mkdir(parents=True)
    stale = reports_dir / "TEST-old.xml"
    stale.write_text('<testsuite name="old"><testcase classname="demo.Old" name="gone">'
                     '<failure message="stale"/></testcase></testsuite>')
    since = time.time_ns() + 10_000_000
    time.sleep(0.05)
    fresh = reports_dir / "TEST-demo.CalcTest.xml"
    fresh.write_text('<?xml version="1.0"?><testsuite name="demo.CalcTest" tests="2">'
                     '<testcase classname="demo.CalcTest" name="adds">'
                     '<failure message="expected: &lt;5&gt; but was: &lt;-1&gt;"/></testcase>'
                     '<testcase classname="demo.CalcTest" name="multiplies"/></testsuite>')
    log = tmp_path / "log"
    log.write_text("")
    report = collect(workspace=workspace, reports=ReportDir(tmp_path / "private"), log=log,
                     since_ns=since)
    assert report is not None and report.runner == "junit"
    assert {(r.test_id, r.outcome, r.message) for r in report.results} == {
        ("demo.CalcTest.adds", T.FAILED, "expected: <5> but was: <-1>"),
        ("demo.CalcTest.multiplies", T.PASSED, None)}


def test_a_coloured_pytest_run_is_read_from_the_injected_report_with_node_ids(
        tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    (workspace / "tests").mkdir(parents=True)
    (workspace / "pytest.ini").write_text("[pytest]\naddopts = --color=yes\n")
    (workspace / "tests" / "test_time.py").write_text(
        "import pytest\n\n\nclass TestDates:\n    @pytest.mark.parametrize('v', [1, 2])\n"
        "    def test_naturaldate(self, v):\n        assert v == 1, 'dates differ'\n")
    reports = ReportDir(tmp_path / "private")
    outcome = run_check(PlannedCheck(name="t", command=f"{sys.executable} -m pytest -q"),
                        workspace=workspace, env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"},
                        log_path=tmp_path / "t.log", infra_patterns=(), reports=reports)

    assert outcome.test_report is not None
    assert [(r.test_id, r.outcome) for r in outcome.test_report.results] == [
        ("tests/test_time.py::TestDates::test_naturaldate[1]", T.PASSED),
        ("tests/test_time.py::TestDates::test_naturaldate[2]", T.FAILED)]
    assert outcome.failing_tests == (
        "tests/test_time.py::TestDates::test_naturaldate[2] - AssertionError: dates differ: "
        "assert 2 == 1",)
    assert outcome.summarized_failure is not None and "\x1b" not in outcome.summarized_failure
    assert outcome.tests_ran == 2


def test_a_rerun_selects_only_the_named_pytest_tests(tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    workspace.mkdir()
    (workspace / "test_a.py").write_text("def test_one():\n    assert False\n\n\n"
                                         "def test_two():\n    assert True\n")
    outcome = run_check(PlannedCheck(name="t", command=f"{sys.executable} -m pytest -q"),
                        workspace=workspace, env={"PATH": "/usr/bin:/bin"},
                        log_path=tmp_path / "t.log", infra_patterns=(),
                        reports=ReportDir(tmp_path / "private"),
                        select=selection(["test_a.py::test_one", "test_a.py::test_two"],
                                         ["test_a.py::test_one"]))
    assert outcome.test_report is not None
    assert [r.test_id for r in outcome.test_report.results] == ["test_a.py::test_one"]


def test_a_pytest_that_collects_no_test_reports_zero_tests_ran(tmp_path: Path) -> None:
    workspace = tmp_path / "empty"
    workspace.mkdir()
    (workspace / "check_nothing.py").write_text("def test_hidden():\n    pass\n")
    outcome = run_check(PlannedCheck(name="t", command=f"{sys.executable} -m pytest -q"),
                        workspace=workspace, env={"PATH": "/usr/bin:/bin"},
                        log_path=tmp_path / "t.log", infra_patterns=(),
                        reports=ReportDir(tmp_path / "private"))
    assert outcome.test_report is not None and outcome.test_report.results == ()
    assert outcome.tests_ran == 0


def test_the_injected_options_keep_what_the_environment_already_asks_of_pytest(
        tmp_path: Path) -> None:
    reports = ReportDir(tmp_path / "my reports")
    env = injected_env({"PYTEST_ADDOPTS": "-x", "PYTHONPATH": "/lib"}, reports,
                       select=selection(["a.py::t", "a.py::u"], ["a.py::t"]))
    assert env["PYTEST_ADDOPTS"] == ("-x -p _test_outcomes --continue-on-collection-errors "
                                     "-p _selected_tests")
    assert env["PYTHONPATH"] == f"{tmp_path / 'my reports'}:/lib"
    # the selection is a file in the report folder, never the environment or the command;
    # the unittest hook has variables of its own (pytest imports unittest before our plugins)
    assert env["TEST_SELECTION"] == env["TEST_LOG_SELECTION"] == str(reports.selected_tests)
    assert reports.selected_tests.read_text() == "a.py::t\n"
    assert env["TEST_OUTCOMES_FILE"] == str(reports.pytest_json)
    assert not any("AGENTCTL" in name or "agentctl" in value for name, value in env.items())
    junit = injected_env({}, reports, junit=True)
    assert junit["PYTEST_ADDOPTS"] == (
        f"'--junitxml={tmp_path / 'my reports'}/pytest-junit.xml' -o junit_family=xunit1 "
        "--continue-on-collection-errors")
    assert "PYTHONPATH" not in junit
    rerun = injected_env({}, reports, selection(["a.py::t", "a.py::u"], ["a.py::t"]), junit=True)
    assert rerun["PYTEST_ADDOPTS"].endswith(" --deselect=a.py::u")
    assert "PYTHONPATH" not in rerun


def test_a_pytest_that_cannot_load_the_plugin_is_run_again_with_its_own_junit_report(
        tmp_path: Path) -> None:
    """`python -E` ignores PYTHONPATH but still reads PYTEST_ADDOPTS, as some wrappers do."""
    workspace = tmp_path / "proj"
    workspace.mkdir()
    (workspace / "test_a.py").write_text("def test_one():\n    assert 1 == 2\n")
    outcome = run_check(PlannedCheck(name="t", command=f"{sys.executable} -E -m pytest -q"),
                        workspace=workspace, env={"PATH": "/usr/bin:/bin"},
                        log_path=tmp_path / "t.log", infra_patterns=(),
                        reports=ReportDir(tmp_path / "private"))
    assert outcome.test_report is not None
    assert [(r.test_id, r.outcome, r.message) for r in outcome.test_report.results] == [
        ("test_a.py::test_one", T.FAILED, "assert 1 == 2")]
    assert "_test_outcomes" not in (tmp_path / "t.log").read_text()


def test_a_command_that_sets_pythonpath_runs_once_and_its_rerun_selects_by_deselecting(
        tmp_path: Path) -> None:
    """`PYTHONPATH=src pytest` drops the path our plugins are on: pytest is asked for its own
    report at once (the command runs once, not once to fail loading them), and a rerun of the
    failing test deselects the others with pytest's own option (a test whose id begins the
    wanted one's is kept: pytest deselects by prefix)."""
    workspace = tmp_path / "proj"
    (workspace / "src").mkdir(parents=True)
    (workspace / "test_a.py").write_text("def test_one():\n    pass\n\n\n"
                                         "def test_one_fails():\n    assert 1 == 2\n\n\n"
                                         "def test_two():\n    pass\n")
    command = f"echo ran >> ../count; PYTHONPATH=src {sys.executable} -m pytest -q"
    check = PlannedCheck(name="t", command=command)
    first = run_check(check, workspace=workspace, env={"PATH": "/usr/bin:/bin"},
                      log_path=tmp_path / "t.log", infra_patterns=(),
                      reports=ReportDir(tmp_path / "private"))
    assert (tmp_path / "count").read_text() == "ran\n"
    assert first.test_report is not None
    assert {r.test_id: r.outcome for r in first.test_report.results} == {
        "test_a.py::test_one": T.PASSED, "test_a.py::test_one_fails": T.FAILED,
        "test_a.py::test_two": T.PASSED}
    select = selection([r.test_id for r in first.test_report.results],
                       ["test_a.py::test_one_fails"])
    assert select.others == ("test_a.py::test_two",)
    rerun = run_check(check, workspace=workspace, env={"PATH": "/usr/bin:/bin"},
                      log_path=tmp_path / "r.log", infra_patterns=(),
                      reports=ReportDir(tmp_path / "private-rerun"), select=select)
    assert rerun.test_report is not None
    assert {r.test_id: r.outcome for r in rerun.test_report.results} == {
        "test_a.py::test_one": T.PASSED, "test_a.py::test_one_fails": T.FAILED}
    assert "Error importing plugin" not in (tmp_path / "r.log").read_text()


# test_flaky fails on every other run (a counter in the working directory); test_broken always
# fails; test_fine passes; test_setup errs in its fixture every time.
RERUN_TESTS = """import pathlib

import pytest


def test_fine():
    pass


def test_broken():
    assert 1 == 2


def test_flaky():
    counter = pathlib.Path("flaky.count")
    runs = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(runs))
    assert runs % 2 == 0, "an odd run"


@pytest.fixture
def broken_fixture():
    raise RuntimeError("no database")


def test_setup(broken_fixture):
    pass
"""


def checked(tmp_path: Path, files: dict[str, str], command: str, *, name: str = "t",
            reports: ReportDir | None = None, env: dict[str, str] | None = None,
            rerun_failures: int = 0, select: Selection = EVERY_TEST) -> CheckOutcome:
    """`command` run as a check in `tmp_path/proj` holding `files`, its log `tmp_path/name.log`."""
    workspace = tmp_path / "proj"
    for path, text in files.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text)
    return run_check(PlannedCheck(name=name, command=command), workspace=workspace,
                     env=env or {"PATH": "/usr/bin:/bin"}, log_path=tmp_path / f"{name}.log",
                     infra_patterns=(), reports=reports or ReportDir(tmp_path / f"{name}-reports"),
                     rerun_failures=rerun_failures, select=select)


def test_pytest_reruns_each_failing_test_in_its_own_process_until_it_passes(
        tmp_path: Path) -> None:
    """With `rerun_failures`, the plugin reruns each failing test in the same pytest process,
    up to that many times until it passes: the first run's outcomes stand as they were, the
    reruns are read apart and listed in the log. A passing test is not rerun."""
    outcome = checked(tmp_path, {"test_r.py": RERUN_TESTS}, f"{sys.executable} -m pytest -q",
                      rerun_failures=2)

    assert outcome.test_report is not None
    assert {r.test_id: r.outcome for r in outcome.test_report.results} == {
        "test_r.py::test_fine": T.PASSED, "test_r.py::test_broken": T.FAILED,
        "test_r.py::test_flaky": T.FAILED, "test_r.py::test_setup": T.ERROR}
    assert outcome.reran == {"test_r.py::test_broken": (T.FAILED, T.FAILED),
                             "test_r.py::test_flaky": (T.PASSED,),
                             "test_r.py::test_setup": (T.ERROR, T.ERROR)}
    assert (tmp_path / "proj" / "flaky.count").read_text() == "2"  # one run, one rerun: one process
    log = (tmp_path / "t.log").read_text()
    assert "agentctl: failing tests rerun in this process" in log
    assert "test_r.py::test_broken: FAILED, FAILED" in log
    assert "2 failed, 1 passed, 1 error" in log  # pytest's own counts are the first run's


# test_parts and test_fixture fail in a subtest every time (test_fixture's body itself passes:
# pytest fails it for its subtest); test_flaky_part's subtest fails on every other run.
SUBTESTS = """import pathlib
import unittest


class T(unittest.TestCase):
    def test_parts(self):
        for n in (1, 2):
            with self.subTest(n=n):
                self.assertEqual(n, 1)

    def test_flaky_part(self):
        counter = pathlib.Path("flaky.count")
        runs = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(runs))
        with self.subTest(run=runs):
            self.assertEqual(runs % 2, 0)

    def test_plain(self):
        self.assertEqual(1, 2)

    def test_text(self):
        self.assertEqual("after", "a long traceback")


def test_fixture(subtests):
    with subtests.test(msg="one"):
        assert 1 == 2
"""


def test_a_test_with_subtests_is_rerun_in_process_and_a_failing_subtest_fails_the_rerun(
        tmp_path: Path) -> None:
    """Subtests log reports of their own: while rerun, those are neither printed nor counted
    (the log's counts and a later failure's traceback, in the command's own style, are the
    first run's), but a subtest that fails fails the rerun, even where the test's body passed."""
    command = f"{sys.executable} -m pytest -p no:cacheprovider"
    plain = checked(tmp_path, {"test_s.py": SUBTESTS}, command, name="plain")
    (tmp_path / "proj" / "flaky.count").unlink()
    rerun = checked(tmp_path, {}, command, name="rerun", rerun_failures=2)

    assert rerun.test_report is not None and plain.test_report is not None
    assert {r.test_id: r.outcome for r in rerun.test_report.results} == {
        r.test_id: r.outcome for r in plain.test_report.results}
    assert rerun.test_report.outcome_of("test_s.py::test_fixture") is T.FAILED
    assert rerun.reran == {"test_s.py::T::test_parts": (T.FAILED, T.FAILED),
                           "test_s.py::T::test_flaky_part": (T.PASSED,),
                           "test_s.py::T::test_plain": (T.FAILED, T.FAILED),
                           "test_s.py::T::test_text": (T.FAILED, T.FAILED),
                           "test_s.py::test_fixture": (T.FAILED, T.FAILED)}
    logs = [strip_ansi((tmp_path / f"{name}.log").read_text()) for name in ("plain", "rerun")]
    summaries = [[line for line in log.splitlines() if " in " in line and "failed" in line][-1]
                 for log in logs]
    assert summaries[0].split(" in ")[0] == summaries[1].split(" in ")[0]
    assert all(log.count("SUBFAIL") == logs[0].count("SUBFAIL") > 0 for log in logs)
    assert all("AssertionError: 'after' != 'a long traceback'" in log for log in logs)
    assert all("self.assertEqual(\"after\"" in log for log in logs)  # the source: long style


def test_under_xdist_a_test_with_subtests_is_left_to_a_process_of_its_own(
        tmp_path: Path) -> None:
    """An xdist worker sends every report logged to the main process, which would print and
    count a rerun's subtests: there such a test is not rerun in process; the others are."""
    outcome = checked(tmp_path, {"test_s.py": SUBTESTS},
                      f"{sys.executable} -m pytest -q -p no:cacheprovider -n 2", rerun_failures=2)
    assert outcome.test_report is not None
    assert outcome.test_report.outcome_of("test_s.py::T::test_parts") is T.FAILED
    assert outcome.reran == {"test_s.py::T::test_plain": (T.FAILED, T.FAILED),
                             "test_s.py::T::test_text": (T.FAILED, T.FAILED)}


def test_without_rerun_failures_no_test_is_rerun_in_process(tmp_path: Path) -> None:
    outcome = checked(tmp_path, {"test_r.py": RERUN_TESTS}, f"{sys.executable} -m pytest -q")
    assert outcome.test_report is not None
    assert outcome.test_report.outcome_of("test_r.py::test_broken") is T.FAILED
    assert outcome.reran == {}
    assert "rerun in this process" not in (tmp_path / "t.log").read_text()


def test_under_xdist_each_worker_reruns_its_failures_and_the_log_lists_them(
        tmp_path: Path) -> None:
    """The workers run the tests and rerun their failures; what they saw is read beside the
    main report and listed in the main process's summary. A report folder used before keeps
    no worker's file from an earlier run."""
    reports = ReportDir(tmp_path / "private")
    reports.path.mkdir()
    (reports.path / f"{reports.pytest_json.name}.gw7").write_text('{"test_r.py::gone": ["FAILED"]}')
    outcome = checked(tmp_path, {"test_r.py": RERUN_TESTS}, f"{sys.executable} -m pytest -q -n 2",
                      reports=reports, rerun_failures=2)
    assert outcome.test_report is not None
    assert outcome.test_report.outcome_of("test_r.py::test_broken") is T.FAILED
    assert outcome.reran == {"test_r.py::test_broken": (T.FAILED, T.FAILED),
                             "test_r.py::test_flaky": (T.PASSED,),
                             "test_r.py::test_setup": (T.ERROR, T.ERROR)}
    log = strip_ansi((tmp_path / "t.log").read_text())
    assert "agentctl: failing tests rerun in this process" in log
    assert "test_r.py::test_setup: ERROR, ERROR" in log
    assert "2 failed, 1 passed, 1 error" in log


def test_pythonpath_given_to_one_command_is_lifted_so_the_plugin_loads(tmp_path: Path) -> None:
    """`PYTHONPATH=src pytest`: src goes into pytest's environment beside our plugins, so its
    failing test is rerun in process and src's modules are still found."""
    reports = ReportDir(tmp_path / "private")
    outcome = checked(
        tmp_path, {"src/calc.py": "def add(a, b):\n    return a - b\n",
                   "test_c.py": "from calc import add\n\n\n"
                                "def test_add():\n    assert add(2, 3) == 5\n"},
        f"PYTHONPATH=src {sys.executable} -m pytest -q", reports=reports,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "/elsewhere"}, rerun_failures=1)
    assert outcome.reran == {"test_c.py::test_add": (T.FAILED,)}
    assert reports.pytest_json.is_file() and not reports.pytest_report.exists()


def test_only_a_plain_pythonpath_for_one_simple_command_is_lifted() -> None:
    assert lifted_pythonpath("PYTHONPATH=src python -m pytest -q") == (
        "src", "python -m pytest -q")
    assert lifted_pythonpath("PYTHONPATH=src:lib FOO=1 pytest $ARGS") == (
        "src:lib", "FOO=1 pytest $ARGS")
    assert lifted_pythonpath("PYTHONPATH= pytest") == ("", "pytest")
    for kept_as_written in ("PYTHONPATH=src pytest; pytest other",
                            "PYTHONPATH=src pytest && echo ok", "PYTHONPATH=src pytest | tee x",
                            "PYTHONPATH=$(pwd)/src pytest", "PYTHONPATH='a b' pytest",
                            "PYTHONPATH=src PYTHONPATH=lib pytest", "cd x; PYTHONPATH=src pytest",
                            "PYTHONPATH=src", "export PYTHONPATH=src; pytest"):
        assert lifted_pythonpath(kept_as_written) is None, kept_as_written


def test_only_a_command_that_replaces_pythonpath_is_taken_to_hide_the_plugins() -> None:
    assert sets_pythonpath("PYTHONPATH=src python -m pytest")
    assert sets_pythonpath("cd x && export PYTHONPATH=lib; pytest")
    assert not sets_pythonpath("PYTHONPATH=src:$PYTHONPATH pytest")
    assert not sets_pythonpath("MYPYTHONPATH=src pytest")
    assert not sets_pythonpath("python -m pytest")


def test_escape_codes_are_stripped_from_logs_and_from_junit_messages() -> None:
    assert strip_ansi("\x1b[31mFAILED\x1b[0m tests/t.py::\x1b[1mtest_x\x1b[0m - boom") == \
        "FAILED tests/t.py::test_x - boom"
    assert strip_ansi("#x1B[91m- Apr 30#x1B[39;49;00m") == "- Apr 30"
    assert first_assertion("AssertionError: dates differ\nassert 'May 1' == 'Apr 30'") == \
        "AssertionError: dates differ: assert 'May 1' == 'Apr 30'"


def test_log_names_are_cut_after_a_whole_word() -> None:
    name = check_name("python -m pytest tests/test_something_long.py tests/test_other_thing.py")
    assert name == "python-pytest-test_something_long.py"
    assert len(check_name("a" * 60)) == 40


def test_quiet_unittest_under_the_injected_hook_names_every_pass(tmp_path: Path) -> None:
    """The user's command is unchanged (no -v): the sitecustomize hook names the passes too."""
    workspace = tmp_path / "proj"
    workspace.mkdir()
    (workspace / "test_u.py").write_text(UNITTEST_TESTS)
    outcome = run_check(PlannedCheck(name="t", command=f"{sys.executable} -m unittest test_u"),
                        workspace=workspace, env={"PATH": "/usr/bin:/bin"},
                        log_path=tmp_path / "t.log", infra_patterns=(),
                        reports=ReportDir(tmp_path / "private"))
    report = outcome.test_report
    assert report is not None and report.runner == "unittest" and report.complete
    assert {(r.test_id, r.outcome, r.message) for r in report.results} == {
        ("test_u.T.test_fails", T.FAILED, "AssertionError: 1 != 2"),
        ("test_u.T.test_passes", T.PASSED, None),
        ("test_u.T.test_errs", T.ERROR, "RuntimeError: boom"),
        ("test_u.T.test_skipped", T.SKIPPED, None)}
    assert "test_u.T" not in " ".join(p.name for p in workspace.iterdir())


def test_the_unittest_hook_times_each_test_from_its_start_to_its_stop(tmp_path: Path) -> None:
    """setUp and tearDown included, as pytest's durations are; a failing test rerun in the
    process keeps its first run's, and the timing wrappers count as no change to the runner."""
    files = {"test_t.py": ("import time\nimport unittest\n\n\nclass T(unittest.TestCase):\n"
                           "    def setUp(self):\n        time.sleep(0.05)\n\n"
                           "    def test_slow(self):\n        time.sleep(0.1)\n\n"
                           "    def test_quick(self):\n        pass\n\n"
                           "    def test_broken(self):\n        self.assertEqual(1, 2)\n")}
    reports = ReportDir(tmp_path / "private")
    outcome = checked(tmp_path, files, f"{sys.executable} -m unittest test_t", reports=reports,
                      rerun_failures=1)

    assert outcome.test_report is not None and outcome.test_report.runner == "unittest"
    seconds = {r.test_id: r.duration_seconds for r in outcome.test_report.results}
    assert set(seconds) == {"test_t.T.test_slow", "test_t.T.test_quick", "test_t.T.test_broken"}
    assert seconds["test_t.T.test_slow"] is not None and seconds["test_t.T.test_slow"] >= 0.15
    assert seconds["test_t.T.test_quick"] is not None and seconds["test_t.T.test_quick"] >= 0.05
    assert (seconds["test_t.T.test_broken"] or 0) >= 0.05
    assert outcome.reran == {"test_t.T.test_broken": (T.FAILED,)}
    written = reports.unittest_log.read_text().splitlines()
    assert not any(line.startswith("changed\t") for line in written)


def test_the_unittest_hook_still_imports_the_projects_own_sitecustomize(tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    (workspace / "lib").mkdir(parents=True)
    (workspace / "lib" / "sitecustomize.py").write_text("import builtins\nbuiltins.MARK = 7\n")
    (workspace / "test_m.py").write_text(
        "import builtins, unittest\n\n\nclass M(unittest.TestCase):\n"
        "    def test_mark(self):\n        self.assertEqual(builtins.MARK, 7)\n")
    reports = ReportDir(tmp_path / "private")
    outcome = run_check(PlannedCheck(name="t", command=f"{sys.executable} -m unittest test_m"),
                        workspace=workspace,
                        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(workspace / "lib")},
                        log_path=tmp_path / "t.log", infra_patterns=(), reports=reports)
    assert outcome.test_report is not None
    assert [(r.test_id, r.outcome) for r in outcome.test_report.results] == [
        ("test_m.M.test_mark", T.PASSED)]


def test_the_unittest_hook_is_loaded_from_bytecode_and_imports_no_typing(tmp_path: Path) -> None:
    """Every Python a check starts imports the hook, and the sandbox sets
    PYTHONDONTWRITEBYTECODE: its bytecode is written with it, and it pulls in no module the
    suite did not ask for (typing alone costs more than naming a quick suite's passes)."""
    import importlib.util

    reports = ReportDir(tmp_path / "private")
    reports.prepare()
    source = reports.path / "sitecustomize.py"
    cached = Path(importlib.util.cache_from_source(str(source)))
    assert cached.read_bytes()[8:16] == importlib.util.source_hash(source.read_bytes())
    env = injected_env({"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}, reports)
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, unittest, sitecustomize as s; "
         "print(s.__file__, s.__spec__.cached, 'typing' in sys.modules)"],
        env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert probe.stdout.split() == [str(source), str(cached), "False"]



def test_a_later_checks_hook_gets_the_bytecode_compiled_for_the_first_and_names_its_own_file(
        tmp_path: Path) -> None:
    """The helpers are compiled once a process and their bytes copied into each check's folder:
    the later folder's Python loads them (no compile, the checked hash matches its source) and
    its code names that folder's file, not the first's (a traceback points at what ran)."""
    import importlib.util

    ReportDir(tmp_path / "first").prepare()
    reports = ReportDir(tmp_path / "later")
    reports.prepare()
    source = reports.path / "sitecustomize.py"
    cached = Path(importlib.util.cache_from_source(str(source)))
    first = Path(importlib.util.cache_from_source(str(tmp_path / "first" / "sitecustomize.py")))
    assert cached.read_bytes() == first.read_bytes()
    env = injected_env({"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}, reports)
    probe = subprocess.run(
        [sys.executable, "-v", "-c", "import inspect, sitecustomize as s; print(next("
         "f.__code__.co_filename for f in vars(s).values() if inspect.isfunction(f) "
         "and f.__module__ == 'sitecustomize'))"],
        env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert probe.stdout.split() == [str(source)]
    assert f"code object from '{cached}'" in probe.stderr

def test_a_helpers_bytecode_is_compiled_once_and_kept_for_the_next_process(
        tmp_path: Path) -> None:
    """A run is one process: the helpers' bytecode is kept beside the package's between them,
    and a later process copies it (the bytes planted here under the helper's hash come out
    as they are) unless the kept bytes are for another text, which is compiled and kept."""
    import importlib.util
    import marshal

    kept = tmp_path / "kept" / "helpers.cpython.pyc"
    text = (Path(test_reports.__file__).with_name("unittest_report.py")).read_text()

    def compile_in_a_process(folder: str, source_text: str) -> bytes:
        source = tmp_path / folder / "sitecustomize.py"
        source.parent.mkdir()
        source.write_text(source_text)
        subprocess.run([sys.executable, "-c",
                        "import sys; from pathlib import Path; "
                        "from agentctl.execution.verification.test_reports import _compile; "
                        "_compile(Path(sys.argv[1]), Path(sys.argv[1]).read_text(), "
                        "kept=Path(sys.argv[2]))", str(source), str(kept)],
                       check=True, cwd=tmp_path, timeout=60, env={
                           k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
        return Path(importlib.util.cache_from_source(str(source))).read_bytes()

    first = compile_in_a_process("first", text)
    kept_file = kept.with_suffix(".sitecustomize.pyc")
    assert kept_file.read_bytes() == first
    assert first[8:16] == importlib.util.source_hash(text.encode())
    planted = first[:16] + marshal.dumps(compile("KEPT = 1\n", "x", "exec"))
    kept_file.write_bytes(planted)
    assert compile_in_a_process("later", text) == planted
    other = text + "\n# another text\n"
    fresh = compile_in_a_process("other", other)
    assert fresh != planted and fresh[8:16] == importlib.util.source_hash(other.encode())
    assert kept_file.read_bytes() == fresh


# test_flaky fails on every other run and notes the process it ran in; the class and module
# fixtures count how often they were set up (a rerun needs them, as the first run did).
UNITTEST_RERUNS = """import os
import pathlib
import unittest


def setUpModule():
    with open("module.setups", "a") as out:
        out.write("x")


class T(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open("class.setups", "a") as out:
            out.write("x")

    def test_fine(self):
        pass

    def test_broken(self):
        self.assertEqual(1, 2)

    def test_flaky(self):
        counter = pathlib.Path("flaky.count")
        runs = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(runs))
        with open("flaky.pids", "a") as out:
            out.write(f"{os.getpid()}\\n")
        self.assertEqual(runs % 2, 0, "an odd run")

    def test_parts(self):
        for n in (1, 2):
            with self.subTest(n=n):
                self.assertEqual(n, 1)
"""


def test_unittest_reruns_each_failing_test_in_the_same_process_until_it_passes(
        tmp_path: Path) -> None:
    """The naming hook reruns each failing test once the suite has run, in the same process,
    with its class's and module's fixtures around it: the first run's outcomes stand, the
    reruns are written apart and listed in the log. A module that failed to import is not
    rerun: it is not flaky."""
    files = {"test_u.py": UNITTEST_RERUNS, "test_gone.py": "import not_a_module_anywhere\n"}
    reports = ReportDir(tmp_path / "private")
    outcome = checked(tmp_path, files, f"{sys.executable} -m unittest", reports=reports,
                      rerun_failures=2)

    assert outcome.test_report is not None
    assert {r.test_id: r.outcome for r in outcome.test_report.results} == {
        "test_u.T.test_fine": T.PASSED, "test_u.T.test_broken": T.FAILED,
        "test_u.T.test_flaky": T.FAILED, "test_u.T.test_parts": T.FAILED,
        "unittest.loader._FailedTest.test_gone": T.ERROR}
    assert outcome.reran == {"test_u.T.test_broken": (T.FAILED, T.FAILED),
                             "test_u.T.test_flaky": (T.PASSED,),
                             "test_u.T.test_parts": (T.FAILED, T.FAILED)}
    workspace = tmp_path / "proj"
    assert len(set((workspace / "flaky.pids").read_text().split())) == 1  # one process
    # the first run, then each of the 5 reruns set the class and its module up again
    assert (workspace / "class.setups").read_text() == "x" * 6
    assert (workspace / "module.setups").read_text() == "x" * 6
    # written by the hook before its end mark, and nothing it wrapped counts as changed
    written = reports.unittest_log.read_text().splitlines()
    assert [line for line in written if line.startswith("reran\t")] == [
        "reran\ttest_u.T.test_broken\tFAILED\tFAILED", "reran\ttest_u.T.test_flaky\tPASSED",
        "reran\ttest_u.T.test_parts\tFAILED\tFAILED"]
    assert written[0].startswith("start\t") and written[-1].startswith("end\t")
    assert not any(line.startswith("changed\t") for line in written)
    summary = outcome.summarized_failure or ""
    assert "changed" not in summary and "report was complete" not in summary
    log = (tmp_path / "t.log").read_text()
    assert "agentctl: failing tests rerun in this process" in log
    assert "test_u.T.test_broken: FAILED, FAILED" in log
    assert "FAILED (failures=3, errors=1)" in log  # unittest's own counts are the first run's


def test_a_unittest_rerun_runs_only_the_tests_its_file_names(tmp_path: Path) -> None:
    """The selection is a file in the report folder: the command and its environment stay
    small whatever the number of tests, and only the named tests run."""
    wanted = ["test_u.T.test_broken", "test_u.T.test_flaky"]
    reports = ReportDir(tmp_path / "private")
    command = f"{sys.executable} -m unittest -v"
    files = {"test_u.py": UNITTEST_RERUNS,
             "test_other.py": "open('other.imported', 'w').close()\n"}
    outcome = checked(tmp_path, files, command, reports=reports,
                      select=Selection(tuple(wanted)), rerun_failures=1)

    assert outcome.test_report is not None
    assert sorted(r.test_id for r in outcome.test_report.results) == wanted
    assert outcome.reran == {"test_u.T.test_broken": (T.FAILED,),
                             "test_u.T.test_flaky": (T.PASSED,)}
    assert reports.selected_tests.read_text().splitlines() == wanted
    log = (tmp_path / "t.log").read_text()
    assert "Ran 2 tests" in log and "test_fine" not in log
    assert not (tmp_path / "proj" / "other.imported").exists()  # loaded by name: no discovery
    # the run, then one rerun of each: no module but the named tests' is set up
    assert (tmp_path / "proj" / "module.setups").read_text() == "xxx"


def test_pytest_reruns_select_through_a_file_whatever_the_number_of_tests(
        tmp_path: Path) -> None:
    """3,000 tests, 2,000 of them selected by long ids: more than an environment variable
    holds (Linux takes 128 KiB), and still only those run (under xdist too)."""
    names = [f"test_{'x' * 80}_{n}" for n in range(3000)]
    module = "".join(f"def {name}():\n    pass\n\n\n" for name in names)
    wanted = [f"test_many.py::{name}" for name in names[:2000]]
    for command in (f"{sys.executable} -m pytest -q -p no:cacheprovider",
                    f"{sys.executable} -m pytest -q -p no:cacheprovider -n 2"):
        outcome = checked(tmp_path, {"test_many.py": module}, command,
                          select=selection([f"test_many.py::{n}" for n in names], wanted))
        assert outcome.test_report is not None, (tmp_path / "t.log").read_text()[-2000:]
        assert sorted(r.test_id for r in outcome.test_report.results) == sorted(wanted)


def test_a_module_pytest_cannot_collect_is_named_as_a_collection_error(tmp_path: Path) -> None:
    """The module's node id is an error with its last line (the other modules' tests still
    run), and nothing is rerun in process."""
    files = {"test_ok.py": "def test_ok():\n    pass\n",
             "test_props.py": "import not_installed_anywhere  # noqa: F401\n"}
    for command in (f"{sys.executable} -m pytest -q -p no:cacheprovider",
                    f"{sys.executable} -m pytest -q -p no:cacheprovider -n 2"):
        outcome = checked(tmp_path, files, command, rerun_failures=2)
        assert outcome.test_report is not None
        assert [(r.test_id, r.outcome, r.message) for r in outcome.test_report.failing] == [
            ("test_props.py", T.ERROR, "collection error: ModuleNotFoundError: No module named "
                                       "'not_installed_anywhere'")]
        assert outcome.reran == {}


# A test class made by the module's load_tests hook: it cannot be loaded by its name.
MADE_BY_LOAD_TESTS = """import unittest


def load_tests(loader, tests, pattern):
    made = type("Made", (unittest.TestCase,), {"test_made": lambda self: self.fail("made")})
    made.__module__ = __name__
    tests.addTests(loader.loadTestsFromTestCase(made))
    return tests


class Plain(unittest.TestCase):
    def test_plain(self):
        pass
"""


def test_a_unittest_selection_that_does_not_load_by_name_is_cut_from_the_whole_discovery(
        tmp_path: Path) -> None:
    wanted = ("test_made.Made.test_made", "test_u.T.test_broken")
    outcome = checked(tmp_path, {"test_u.py": UNITTEST_RERUNS, "test_made.py": MADE_BY_LOAD_TESTS},
                      f"{sys.executable} -m unittest discover -s .", select=Selection(wanted))
    assert outcome.test_report is not None
    assert {r.test_id: r.outcome for r in outcome.test_report.results} == {
        "test_made.Made.test_made": T.FAILED, "test_u.T.test_broken": T.FAILED}
