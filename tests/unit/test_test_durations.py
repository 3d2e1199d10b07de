"""Each test's duration as its runner reported it, for CTRF's one entry per test."""

from __future__ import annotations

import json
from pathlib import Path

from agentctl.domain.enums import TestOutcome
from agentctl.execution.verification.plugin_reports import parse_unittest_run
from agentctl.execution.verification.report_formats import parse_go_json, parse_junit


def test_go_test_json_gives_each_tests_elapsed_seconds() -> None:
    lines = [json.dumps(e) for e in (
        {"Action": "run", "Package": "calc", "Test": "TestAdd"},
        {"Action": "pass", "Package": "calc", "Test": "TestAdd", "Elapsed": 0.25},
        {"Action": "fail", "Package": "calc", "Test": "TestMul"})]
    results = {r.test_id: r for r in parse_go_json(iter(lines))}
    assert results["calc::TestAdd"].duration_seconds == 0.25
    assert results["calc::TestMul"].outcome is TestOutcome.FAILED
    assert results["calc::TestMul"].duration_seconds is None


def test_junit_xml_gives_each_cases_time(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text('<testsuite name="s"><testcase classname="a.B" name="test_x" time="1.5"/>'
                      '<testcase classname="a.B" name="test_y"/></testsuite>')
    results = {r.test_id: r.duration_seconds for r in parse_junit(report)}
    assert results == {"a.B.test_x": 1.5, "a.B.test_y": None}


def test_the_unittest_hooks_fourth_column_is_each_tests_seconds() -> None:
    """A line without it (a hook written before durations were) or with no number there still
    names its test, with no duration."""
    log = ("start\t7\nPASSED\tt.T.test_a\t\t0.250000\n"
           "FAILED\tt.T.test_b\tAssertionError: 1 != 2\t0.001500\n"
           "PASSED\tt.T.test_c\t\nPASSED\tt.T.test_d\t\tsoon\nPASSED\tt.T.test_e\t\t-1\n"
           "end\t7\n")
    run = parse_unittest_run(log.encode())
    assert run.trusted
    assert {r.test_id: (r.message, r.duration_seconds) for r in run.results} == {
        "t.T.test_a": (None, 0.25), "t.T.test_b": ("AssertionError: 1 != 2", 0.0015),
        "t.T.test_c": (None, None), "t.T.test_d": (None, None), "t.T.test_e": (None, None)}
