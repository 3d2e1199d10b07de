"""Each test's duration as its runner reported it, for CTRF's one entry per test."""

from __future__ import annotations

import json
from pathlib import Path

from agentctl.domain.enums import TestOutcome
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
