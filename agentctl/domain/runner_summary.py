"""What a test runner says about its own run, and whether a check's evidence agrees with itself.

The exit code, the per-test report and the runner's summary in its log are three witnesses of
one run; the code under test can silence one of them (`os._exit(0)` at exit, a recipe whose
error make ignores, a deleted report) but not easily all three. So any failure any of them
shows fails the check, and a check whose witnesses disagree is named as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentctl.domain.lazy_regex import lazy_regex

# pytest, with or without -q: `==== 1 failed, 3 passed, 1 warning in 0.12s ====`, `no tests ran`
_PYTEST = lazy_regex(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*|no tests ran) in [\d.]+s\b(?: \([^)]*\))?\s*=*$")
_PYTEST_PART = lazy_regex(r"(\d+) (\w+)")
_UNITTEST_RAN = lazy_regex(r"^Ran (\d+) tests? in ")
_UNITTEST_END = lazy_regex(r"^(OK|FAILED|NO TESTS RAN)\b(?: \((.*)\))?$")
_UNITTEST_PART = lazy_regex(r"([a-z ]+)=(\d+)")
_SUREFIRE = lazy_regex(r"^(?:\[\w+\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), "
                       r"Skipped: (\d+)")
_NODE = lazy_regex(r"^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|todo) (\d+)$")
_JEST = lazy_regex(r"^(Tests|Test Suites):\s+(.*\d+ total)$")
_VITEST = lazy_regex(r"^(Tests|Test Files)\s+(.*\d+ \w+.*) \(\d+\)$")
_COUNT_WORD = lazy_regex(r"(\d+) (\w+)")
_GO = lazy_regex(r"^(?:(FAIL)(?:\t\S+.*)?|(ok)  \t\S+.*|--- (FAIL): \S+.*)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerSummary:
    """One summary line a runner printed: `runner` (pytest, unittest, surefire, node, jest,
    vitest, go), the line itself and its counts (`xpassed`: pytest's unexpected passes, which
    its exit code forgives and agentctl's report counts as failed)."""

    runner: str
    line: str
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xpassed: int = 0

    @property
    def failing(self) -> int:
        return self.failed + self.errors


def read_summaries(log_tail: str) -> tuple[RunnerSummary, ...]:
    """Every runner summary in the log's tail, in order; a log of no runner known gives ()."""
    found: list[RunnerSummary] = []
    ran: int | None = None
    node: dict[str, int] = {}
    for raw in log_tail.splitlines():
        line = raw.strip()
        if not line or len(line) > 400:
            continue
        if summary := _pytest(line):
            found.append(summary)
        elif match := _UNITTEST_RAN().match(line):
            ran = int(match.group(1))
        elif ran is not None and (match := _UNITTEST_END().match(line)):
            found.append(_unittest(line, ran, match.group(1), match.group(2) or ""))
            ran = None
        elif match := _SUREFIRE().match(line):
            run, failures, errors, skipped = (int(g) for g in match.groups())
            found.append(RunnerSummary(runner="surefire", line=line, failed=failures,
                                       errors=errors, skipped=skipped,
                                       passed=max(run - failures - errors - skipped, 0)))
        elif match := _NODE().match(line):
            node[match.group(1)] = int(match.group(2))
            if match.group(1) == "fail":
                found.append(RunnerSummary(runner="node", line=line, failed=node["fail"],
                                           passed=node.get("pass", 0)))
        elif match := _JEST().match(line) or _VITEST().match(line):
            found.append(_counted("jest" if ":" in line else "vitest", line, match.group(1),
                                  match.group(2)))
        elif match := _GO().match(line):
            failed = bool(match.group(1) or match.group(3))
            found.append(RunnerSummary(runner="go", line=line, failed=int(failed),
                                       passed=int(not failed)))
    return tuple(found)


def _pytest(line: str) -> RunnerSummary | None:
    match = _PYTEST().match(line)
    if match is None:
        return None
    counts = {word: int(n) for n, word in _PYTEST_PART().findall(match.group(1))}
    return RunnerSummary(
        runner="pytest", line=line.strip("= "), passed=counts.get("passed", 0),
        failed=counts.get("failed", 0), errors=counts.get("error", 0) + counts.get("errors", 0),
        skipped=counts.get("skipped", 0) + counts.get("xfailed", 0),
        xpassed=counts.get("xpassed", 0))


def _unittest(line: str, ran: int, word: str, details: str) -> RunnerSummary:
    counts = {name.strip(): int(n) for name, n in _UNITTEST_PART().findall(details)}
    failed = counts.get("failures", 0) + counts.get("unexpected successes", 0)
    errors = counts.get("errors", 0)
    if word == "FAILED" and not failed and not errors:
        failed = 1  # FAILED with counts it did not name: still a failure
    skipped = counts.get("skipped", 0)
    return RunnerSummary(runner="unittest", line=f"Ran {ran} tests: {line}", failed=failed,
                         errors=errors, skipped=skipped,
                         passed=max(ran - failed - errors - skipped, 0))


def _counted(runner: str, line: str, what: str, text: str) -> RunnerSummary:
    counts = {word: int(n) for n, word in _COUNT_WORD().findall(text)}
    failed = counts.get("failed", 0)
    suites = what in ("Test Suites", "Test Files")  # a suite that failed: it could not load
    return RunnerSummary(runner=runner, line=line, failed=0 if suites else failed,
                         errors=failed if suites else 0, skipped=counts.get("skipped", 0),
                         passed=0 if suites else counts.get("passed", 0))


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportState:
    """What agentctl's own report plugin left: whether it loaded in the runner (`started`),
    whether its report was finished (`ended`: its end marker, written last), and what it found
    changed in the runner's reporting functions (`tampered`)."""

    started: bool = False
    ended: bool = False
    tampered: tuple[str, ...] = ()


NOT_LOADED = ReportState()


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """A finished check's witnesses: its exit code, the per-test report's failing and
    passing counts (None without one), the runner summaries in its log, and the state of
    agentctl's report plugin."""

    exit_code: int | None
    report_failing: int | None = None
    summaries: Sequence[RunnerSummary] = ()
    plugin: ReportState = NOT_LOADED


def disagreement(evidence: Evidence) -> str | None:
    """Why the check must fail although its exit code may say it passed, in one line; None
    when the witnesses agree. A changed runner comes first (nothing it reported can be
    trusted), then a report its process never finished, then any failure any witness shows."""
    plugin = evidence.plugin
    if plugin.tampered:
        return f"the test runner was changed during the run: {', '.join(plugin.tampered)}"
    if plugin.started and not plugin.ended:
        return "the test process ended before its report was complete"
    failing_lines = [s for s in evidence.summaries if s.failing]
    exit_code = evidence.exit_code
    if exit_code == 0 and failing_lines:
        return f"the evidence disagrees: exit code 0, but the log says {failing_lines[-1].line}"
    forgiven = sum(s.xpassed for s in evidence.summaries)
    report = evidence.report_failing
    if exit_code == 0 and report is not None and report > forgiven:
        return f"the evidence disagrees: exit code 0, but the report says {report} failed"
    if report == 0 and failing_lines:
        return ("the evidence disagrees: the report says no test failed, but the log says "
                f"{failing_lines[-1].line}")
    return None


def summaries_ran(summaries: Iterable[RunnerSummary]) -> int:
    """How many tests the summaries count as run (passed, failed or erred)."""
    return sum(s.passed + s.failed + s.errors + s.xpassed for s in summaries)
