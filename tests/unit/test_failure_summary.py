"""Failing tests found in the output of common test runners, and the one-line failure summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.domain.enums import VerificationCheckStatus as C
from agentctl.domain.spec import PlannedCheck
from agentctl.execution.verification.verifier import (
    failing_in_junit,
    failing_tests_from_log,
    summarize_failure,
)

MAVEN_TEST_FAILURE = """\
[INFO] Running com.example.AppTest
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE!
[ERROR] testGreet(com.example.AppTest)  Time elapsed: 0.01 s  <<< FAILURE!
java.lang.AssertionError: expected:<hello x> but was:<hi x>
[INFO] Results:
[ERROR] Failures:
[ERROR]   AppTest.testGreet:42 expected:<hello x> but was:<hi x>
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test
[ERROR] -> [Help 1]
[ERROR] Re-run Maven using the -X switch to enable full debug logging.
[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException
"""

MAVEN_COMPILE_FAILURE = """\
[ERROR] COMPILATION ERROR :
[ERROR] /w/src/main/java/App.java:[10,5] cannot find symbol
[ERROR]   symbol:   variable foo
[ERROR] -> [Help 1]
[ERROR] For more information about the errors and possible solutions, please read:
[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException
"""

GO_TEST = """\
--- FAIL: TestAdd (0.00s)
    add_test.go:8: Add(1,2) = 4, want 3
    --- FAIL: TestAdd/negative (0.00s)
        add_test.go:12: wrong sign
FAIL
FAIL\texample.com/m\t0.002s
"""

JEST = """\
 FAIL  src/sum.test.js
  ● Math › adds numbers

    expect(received).toBe(expected) // Object.is equality
Tests:       1 failed, 1 total
"""

UNITTEST_ERROR = """\
======================================================================
ERROR: test_load (tests.test_config.ConfigTest)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "tests/test_config.py", line 9, in test_load
    load("missing.toml")
FileNotFoundError: [Errno 2] No such file or directory: 'missing.toml'

----------------------------------------------------------------------
Ran 3 tests in 0.001s

FAILED (errors=1)
"""

CHECK = PlannedCheck(name="tests", command="mvn -q test", timeout_seconds=30)


def summary(log: str, status: C = C.FAILED, exit_code: int | None = 1,
            evidence: str | None = None) -> str:
    return summarize_failure(CHECK, status, exit_code, log, failing_tests_from_log(log), evidence)


def test_maven_surefire_results_name_the_failing_test_and_its_message() -> None:
    assert failing_tests_from_log(MAVEN_TEST_FAILURE) == (
        "AppTest.testGreet:42 - expected:<hello x> but was:<hi x>",)
    assert summary(MAVEN_TEST_FAILURE) == (
        "`mvn -q test` failed (exit 1): AppTest.testGreet:42 - expected:<hello x> but was:<hi x>")


def test_maven_compile_error_summary_skips_the_help_footer() -> None:
    assert failing_tests_from_log(MAVEN_COMPILE_FAILURE) == ()
    assert summary(MAVEN_COMPILE_FAILURE) == (
        "`mvn -q test` failed (exit 1): "
        "[ERROR] /w/src/main/java/App.java:[10,5] cannot find symbol")


def test_maven_totals_are_cited_when_no_test_is_named() -> None:
    log = "[ERROR] Tests run: 4, Failures: 0, Errors: 2, Skipped: 0\n[ERROR] -> [Help 1]\n"
    assert summary(log) == (
        "`mvn -q test` failed (exit 1): [ERROR] Tests run: 4, Failures: 0, Errors: 2, Skipped: 0")


def test_go_test_failures_include_subtests_and_their_messages() -> None:
    assert failing_tests_from_log(GO_TEST) == (
        "TestAdd - Add(1,2) = 4, want 3", "TestAdd/negative - wrong sign")
    assert summary(GO_TEST).endswith("failed (exit 1): TestAdd - Add(1,2) = 4, want 3 (+1 more)")


def test_jest_failures_are_named_suite_and_test() -> None:
    assert failing_tests_from_log(JEST) == ("Math › adds numbers",)


def test_unittest_errors_name_the_test_and_the_exception() -> None:
    assert failing_tests_from_log(UNITTEST_ERROR) == (
        "tests.test_config.ConfigTest.test_load - FileNotFoundError: [Errno 2] No such file or "
        "directory: 'missing.toml'",)


def test_pytest_collection_errors_are_named() -> None:
    log = "ERROR tests/test_db.py - ModuleNotFoundError: No module named 'psycopg'\n"
    assert failing_tests_from_log(log) == (
        "tests/test_db.py - ModuleNotFoundError: No module named 'psycopg'",)


def test_pytest_parametrized_ids_with_spaces_are_kept_whole() -> None:
    log = "FAILED tests/test_a.py::test_x[a b] - assert 1 == 2\n"
    assert failing_tests_from_log(log) == ("tests/test_a.py::test_x[a b] - assert 1 == 2",)


def test_without_a_named_test_the_last_error_looking_line_is_cited() -> None:
    log = "step 1\nTypeError: cannot add int and str\nstep 2 done\ncleanup\n"
    assert summary(log) == "`mvn -q test` failed (exit 1): TypeError: cannot add int and str"


def test_without_any_error_line_the_last_non_empty_line_is_cited() -> None:
    assert summary("building\nsomething odd happened\n\n") == (
        "`mvn -q test` failed (exit 1): something odd happened")


def test_a_silent_failure_says_there_was_no_output() -> None:
    assert summary("") == "`mvn -q test` failed (exit 1): no output"


def test_a_timeout_summary_gives_the_limit() -> None:
    assert summary("still running", C.TIMED_OUT, -15) == "`mvn -q test` timed out after 30s"


def test_an_infra_failure_cites_its_evidence_line() -> None:
    log = "[INFO] Downloading\n[ERROR] Could not transfer artifact x:y:1.0 repository timeout\n"
    evidence = "[ERROR] Could not transfer artifact x:y:1.0 repository timeout"
    assert summary(log, C.INFRA_FAILURE, 1, evidence) == (
        "`mvn -q test` infrastructure failure: [ERROR] Could not transfer artifact x:y:1.0 "
        "repository timeout")


def test_a_summary_is_one_line_of_at_most_300_characters() -> None:
    log = "FAILED tests/test_a.py::test_x - " + "AssertionError: " + "x" * 1000 + "\nmore\n"
    line = summary(log)
    assert "\n" not in line and len(line) <= 300
    assert line.startswith("`mvn -q test` failed (exit 1): tests/test_a.py::test_x - Assertion")


def test_a_long_command_is_shortened_in_the_summary() -> None:
    check = PlannedCheck(name="long", command="echo " + "word " * 100)
    line = summarize_failure(check, C.FAILED, 1, "boom error", (), None)
    assert len(line) <= 300 and line.endswith("failed (exit 1): boom error")


def test_failing_in_junit_reads_a_single_testsuite_root(tmp_path: Path) -> None:
    report = tmp_path / "TEST-AppTest.xml"
    report.write_text(
        '<testsuite name="com.example.AppTest" tests="2" failures="1">'
        '<testcase classname="com.example.AppTest" name="testGreet">'
        '<failure type="java.lang.AssertionError">expected:&lt;hello&gt;\n at x</failure>'
        '</testcase><testcase classname="com.example.AppTest" name="testOk"/>'
        '<testcase classname="com.example.AppTest" name="testSkip"><skipped/></testcase>'
        '</testsuite>')
    assert failing_in_junit(report) == ("com.example.AppTest.testGreet - expected:<hello>",)


def test_failing_in_junit_rejects_a_malformed_report(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text("<testsuites><testsuite>")
    with pytest.raises(SyntaxError):
        failing_in_junit(report)


def test_failing_in_junit_refuses_xml_that_is_no_junit_report_as_a_value_error(
        tmp_path: Path) -> None:
    # junitparser's own error is turned into ValueError, which the verifier and the report
    # reader catch without importing junitparser for it
    report = tmp_path / "junit.xml"
    report.write_text("<html><body>not a report</body></html>")
    with pytest.raises(ValueError, match="is no JUnit report"):
        failing_in_junit(report)


def test_failing_in_junit_names_a_failure_without_a_message_alone(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="s"><testcase classname="pkg.T" name="test_a">'
        '<error/></testcase><testcase classname="pkg.T" name="test_b"/></testsuite>'
        '</testsuites>')
    assert failing_in_junit(report) == ("pkg.T.test_a",)
