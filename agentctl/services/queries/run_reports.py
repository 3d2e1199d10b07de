"""`run report`: a run's verification as other tools read it, SWE-bench's report.json or JUnit
XML of every check, built from the stored records and the parsed TEST_REPORT artifacts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Protocol

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from agentctl.domain.artifact import Artifact
from agentctl.domain.enums import TestOutcome, VerificationCheckStatus
from agentctl.domain.errors import BadInput
from agentctl.domain.patch import Patch
from agentctl.domain.run import Run
from agentctl.domain.swebench import swebench_report
from agentctl.domain.verification import TestReport, VerificationCheck, VerificationReport
from agentctl.services.queries.per_test import ReportFiles, per_test_reports

FORMATS = ("swebench", "junit")
NAMED = (*FORMATS, "html", "ctrf", "atif")  # the others are the run page's (cli/reports.py)


class ReportReads(Protocol):
    """The records a report is built from (the store's views give them)."""

    def run(self, text: str | None) -> Run: ...
    def verification(self, run_id: str) -> VerificationReport | None: ...
    def patch(self, run_id: str) -> Patch | None: ...
    def artifacts_by_id(self, artifact_ids: Sequence[str]) -> dict[str, Artifact]: ...


def run_report(views: ReportReads, blobs: ReportFiles, run_text: str | None, fmt: str) -> str:
    """The report of the run (newest without an id) in `fmt`, as text to write."""
    if fmt not in FORMATS:
        raise BadInput(f"unknown report format {fmt!r}; expected one of: {', '.join(NAMED)}")
    run = views.run(run_text)
    verification = views.verification(run.run_id)
    if fmt == "swebench":
        document = swebench_report(run.run_id, views.patch(run.run_id), verification)
        return json.dumps(document, indent=2) + "\n"
    reports = per_test_reports(views, blobs, verification)
    return junit_xml(run.run_id, verification, reports)


def junit_xml(run_id: str, verification: VerificationReport | None,
              reports: Mapping[str, TestReport]) -> str:
    """One testsuite per check: its tests where the runner reported them, else the check as one
    test case; each failure carries its first assertion line."""
    xml = JUnitXml(name=run_id)
    for check in verification.checks if verification is not None else ():
        suite = TestSuite(check.name)
        suite.add_property("command", check.command)
        suite.add_property("status", check.status.value)
        if check.classification is not None:
            suite.add_property("classification", check.classification.value)
        classes = {t.test_id: t.classification.value for t in check.classified_tests}
        report = reports.get(check.name)
        if report is not None:
            for result in report.results:
                suite.add_testcase(_case(result.test_id, result.outcome, result.message,
                                         classes.get(result.test_id)))
        else:
            suite.add_testcase(_whole_check(check))
        suite.time = check.duration_seconds
        xml.add_testsuite(suite)
    xml.update_statistics()  # type: ignore[no-untyped-call]  # junitparser has no annotations
    encoded: bytes = xml.tostring()  # type: ignore[no-untyped-call]
    return encoded.decode("utf-8") + "\n"


def _case(test_id: str, outcome: TestOutcome, message: str | None,
          classification: str | None) -> TestCase:
    classname, _, name = test_id.rpartition("::") if "::" in test_id \
        else test_id.rpartition(".")
    case = TestCase(name or test_id, classname=classname or None)
    if outcome is TestOutcome.FAILED:
        case.result = [Failure(message or "failed")]
    elif outcome is TestOutcome.ERROR:
        case.result = [Error(message or "error")]
    elif outcome is TestOutcome.SKIPPED:
        case.result = [Skipped()]
    if classification is not None:
        case.system_out = f"classification: {classification}"
    return case


def _whole_check(check: VerificationCheck) -> TestCase:
    case = TestCase(check.name, classname="agentctl.check")
    case.time = check.duration_seconds
    if check.status is VerificationCheckStatus.SKIPPED:
        case.result = [Skipped()]
    elif check.status is VerificationCheckStatus.FAILED:
        case.result = [Failure(check.summarized_failure or "failed")]
    elif check.status is not VerificationCheckStatus.PASSED:
        case.result = [Error(check.summarized_failure or check.status.value)]
    return case
