"""Run one planned verification check and say what it proved, in one line a reviewer can act on.

No database and no artifacts here: the caller stores the log and builds the records, and
redacts the summary like anything else it stores.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentctl.domain.ansi import strip_ansi
from agentctl.domain.enums import TestOutcome, VerificationCheckStatus
from agentctl.domain.lazy_regex import lazy_regex
from agentctl.domain.runner_summary import NOT_LOADED, Evidence, ReportState, disagreement, read_summaries
from agentctl.domain.spec import PlannedCheck
from agentctl.domain.verification import DEFAULT_INFRA_PATTERNS, TestReport, classify_exit
from agentctl.execution.process import run_to_file
from agentctl.execution.redact_stream import read_tail
from agentctl.execution.sandboxing.sandbox import Jail
from agentctl.execution.verification import report_formats, test_reports
from agentctl.execution.verification.plugin_reports import both

C = VerificationCheckStatus
MAX_SUMMARY_CHARS = 300
MAX_FAILING_TESTS = 50

_PYTEST = lazy_regex(r"^(?:FAILED|ERROR) (.+?(?:::|\.py).*?)(?: - (.*))?$")
_UNITTEST = lazy_regex(r"^(?:FAIL|ERROR): (\S+) \(([^)\s]+)\)")
_SUREFIRE = lazy_regex(r"^\[ERROR\]\s{2,}([\w$]+(?:\.[\w$]+)+(?::\d+)?(?:->\S+)*)\s+(.*)$")
_SUREFIRE_TOTALS = lazy_regex(r"Tests run: \d+, Failures: (\d+), Errors: (\d+)")
_GO = lazy_regex(r"^\s*--- FAIL: (\S+)")
_JEST = lazy_regex(r"^\s*● (.+ › .+)$")
_ERRORISH = lazy_regex(r"error|FAILED|Exception|assert", re.IGNORECASE)
# Wrapper lines that say a build failed without saying what: Maven's help footer and its
# indented continuations (`[ERROR]   symbol: ...`), make's `*** [target] Error 1`.
_NOISE = lazy_regex(
    r"^\[ERROR\](?:\s*$|\s{2,}|\s*(?:-> )?\[Help|\s*Re-run Maven|\s*For more information"
    r"|\s*To see the full)|^make(?:\[\d+\])?: \*\*\*"
)


# How many tests ran, as the common runners say it at the end of their output.
_PYTEST_SUMMARY = lazy_regex(r"^=+ (.+) in [\d.]+s\b.*=+$")
_PYTEST_COUNT = lazy_regex(r"(\d+) (?:passed|failed|errors?|xfailed|xpassed)\b")
_SUREFIRE_RAN = lazy_regex(r"^(?:\[\w+\] )?Tests run: (\d+), Failures")


def tests_ran(log_tail: str) -> int | None:
    """The number of tests the runner reports having run (0 for "Ran 0 tests" or pytest's "no
    tests ran"), or None when the output names no runner it knows; the last report wins."""
    found: int | None = None
    for line in log_tail.splitlines():
        text = line.strip()
        if match := report_formats.UNITTEST_RAN().match(text) or _SUREFIRE_RAN().match(text):
            found = int(match.group(1))
        elif match := _PYTEST_SUMMARY().match(text):
            found = sum(int(count) for count in _PYTEST_COUNT().findall(match.group(1)))
    return found


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    status: VerificationCheckStatus
    exit_code: int | None
    duration_seconds: float
    summarized_failure: str | None  # one line; None when PASSED
    failing_tests: tuple[str, ...]
    junit_report: Path | None  # absolute path of the JUnit XML the command wrote, if any
    output_bytes: int
    tests_ran: int | None = None  # as the runner reported it; None when no runner was seen
    test_report: TestReport | None = None  # per-test results, when a runner's report was read
    # failing tests the runner reran in its own process (`rerun_failures`): their outcomes
    reran: Mapping[str, tuple[TestOutcome, ...]] = field(default_factory=dict)


def run_check(
    check: PlannedCheck, *, workspace: Path, env: Mapping[str, str], log_path: Path,
    infra_patterns: Sequence[str], should_stop: Callable[[], bool] | None = None,
    reports: test_reports.ReportDir | None = None,
    select: test_reports.Selection = test_reports.EVERY_TEST,
    command: str | None = None, confine: Jail | None = None, kept: bool = False,
    rerun_failures: int = 0,
) -> CheckOutcome:
    """Run `check.command` (or `command`, a rerun's) through `sh -c` in `workspace`, its output
    going to `log_path`.

    A check stopped by `should_stop` comes back CANCELLED, not as a failure of the code or of
    the machine. A JUnit report counts only if the command wrote or
    rewrote it: a stale one committed in the repository proves nothing about this run.
    With `reports`, pytest is asked for a report there and per-test results are read from
    whatever the runner left (`test_reports.collect`); `select` reruns only those pytest tests.
    A command that sets PYTHONPATH itself gets pytest's own report at once (no plugin of ours
    could load), unless it is `PYTHONPATH=value` given to one simple command: that value is
    put in its environment instead, beside our plugins' folder. With `rerun_failures`, pytest
    reruns each failing test up to that many times in its own process, where our plugin loads
    (`CheckOutcome.reran`).
    A check that failed after the sandbox refused it a connection is an INFRA_FAILURE naming
    the host: the machine, not the code, kept it from passing.
    """
    report_path = (workspace / check.junit_xml).absolute() if check.junit_xml else None
    before = _stat(report_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    run = command or check.command
    if reports is not None:
        run, env = test_reports.with_lifted_pythonpath(run, env)
    base_env = env
    own_path = test_reports.sets_pythonpath(run)
    if reports is not None:
        reports.prepare()
        env = test_reports.injected_env(env, reports, select, junit=own_path,
                                        rerun_failures=rerun_failures)
    since_ns = time.time_ns() - 1_000_000  # coarse file times: a report written at once counts
    if (reports is not None and own_path) or report_path is not None:
        report_formats.load_junit_reader_beside()
    held = reports.hold() if reports is not None else None
    try:
        result = run_to_file(
            run, cwd=workspace, env=env, output=log_path,
            timeout=check.timeout_seconds, should_stop=should_stop, confine=confine,
            kept=kept,
        )
        tail = strip_ansi(read_tail(log_path))
        if reports is not None and not own_path and result.exit_code != 0 and \
                test_reports.plugin_missing(tail):
            # the command's pytest could not load agentctl's plugin: again with pytest's own
            # report
            env = test_reports.injected_env(base_env, reports, select, junit=True)
            result = run_to_file(
                run, cwd=workspace, env=env, output=log_path,
                timeout=check.timeout_seconds, should_stop=should_stop, confine=confine,
                kept=kept,
            )
            tail = strip_ansi(read_tail(log_path))
        pytest_run, unittest_run = held.read() if held is not None else (None, None)
    finally:
        if held is not None:
            held.close()
    junit_report = report_path if report_path and _stat(report_path) not in (None, before) else None
    failing: tuple[str, ...] = ()
    tests: TestReport | None = None
    plugin: ReportState = NOT_LOADED
    reran: Mapping[str, tuple[TestOutcome, ...]] = {}
    if reports is not None and not result.cancelled:
        tests = test_reports.collect(workspace=workspace, reports=reports, log=log_path,
                                     since_ns=since_ns, junit_xml=check.junit_xml,
                                     pytest_run=pytest_run, unittest_run=unittest_run)
        if pytest_run is not None and unittest_run is not None:
            plugin = both(pytest_run.state, unittest_run.state)
        failing = _bounded([_with_message(t.test_id, t.message) for t in tests.failing]) \
            if tests else ()
        if rerun_failures and failing:
            reran = test_reports.reran_in_process(reports, pytest_run)
    if junit_report is not None and not failing:
        try:
            failing = failing_in_junit(junit_report)
        except (SyntaxError, OSError, ValueError):
            junit_report = None  # not a readable report: the log is the evidence
    if not failing and result.exit_code != 0:
        failing = failing_tests_from_log(tail)
    status, evidence = classify_exit(
        result.exit_code, timed_out=result.timed_out, log_tail=tail,
        infra_patterns=[*DEFAULT_INFRA_PATTERNS, *infra_patterns], failing_tests=failing,
    )
    disagrees = None if result.cancelled or result.timed_out else disagreement(Evidence(
        exit_code=result.exit_code, summaries=read_summaries(tail), plugin=plugin,
        report_failing=None if tests is None else len(tests.failing)))
    overruled = disagrees is not None and (status is C.PASSED or bool(plugin.tampered))
    if overruled:
        status = C.FAILED
        failing = failing or failing_tests_from_log(tail)
    summary: str | None
    blocked = sorted({f"{c.host}:{c.port}" for c in confine.denied}) if confine else []
    if result.cancelled:
        status, summary = C.CANCELLED, f"{_cmd(check)} was cancelled"
    elif blocked and status is not C.PASSED and status is not C.TIMED_OUT:
        status = C.INFRA_FAILURE
        summary = _one_line(f"{_cmd(check)} infrastructure failure: the sandbox blocked network "
                            f"access to {', '.join(blocked)} (allow it in [sandbox.network] "
                            "allow)")
    elif overruled:
        summary = _one_line(f"{_cmd(check)} failed: {disagrees}")
    else:
        summary = None if status is C.PASSED else summarize_failure(
            check, status, result.exit_code, tail, failing, evidence)
    return CheckOutcome(
        status=status, exit_code=result.exit_code, duration_seconds=result.duration_seconds,
        summarized_failure=summary, failing_tests=failing, junit_report=junit_report,
        output_bytes=result.output_bytes, test_report=tests, reran=reran,
        tests_ran=_ran(tests) if tests is not None and tests.complete else tests_ran(tail),
    )


def _ran(report: TestReport) -> int:
    counts = report.counts
    return counts.passed + counts.failed + counts.errors


def summarize_failure(
    check: PlannedCheck, status: VerificationCheckStatus, exit_code: int | None, log_tail: str,
    failing_tests: Sequence[str], infra_evidence: str | None,
) -> str:
    """One line (at most ~300 chars) naming the command and the first concrete failure."""
    command = _cmd(check)
    if status is C.PASSED:
        return f"{command} passed"
    if status is C.TIMED_OUT:
        return _one_line(f"{command} timed out after {check.timeout_seconds:g}s")
    if status is C.INFRA_FAILURE:
        evidence = infra_evidence or "the environment failed"
        last = _last_line(log_tail)
        if last and last not in evidence and evidence not in log_tail:
            evidence = f"{evidence}: {last}"  # an exit-code reason; the log says what was missing
        return _one_line(f"{command} infrastructure failure: {evidence}")
    if failing_tests:
        more = f" (+{len(failing_tests) - 1} more)" if len(failing_tests) > 1 else ""
        detail = _one_line(failing_tests[0], MAX_SUMMARY_CHARS - len(command) - len(more) - 20)
        return _one_line(f"{command} failed (exit {exit_code}): {detail}{more}")
    cited = _totals_line(log_tail) or _last_error_line(log_tail) or _last_line(log_tail)
    return _one_line(f"{command} failed (exit {exit_code}): {cited or 'no output'}")


def failing_in_junit(path: Path) -> tuple[str, ...]:
    """Failing and erroring tests of a JUnit XML report, each `class.name - first message line`.

    Raises SyntaxError (ElementTree's ParseError) for a malformed report, and ValueError for XML
    that is no JUnit report or one over 64 MiB (parsing builds the whole tree in memory).
    """
    return _bounded([_with_message(t.test_id, t.message)
                     for t in report_formats.parse_junit(path)
                     if t.outcome in (TestOutcome.FAILED, TestOutcome.ERROR)])


def failing_tests_from_log(log_tail: str) -> tuple[str, ...]:
    """Failing tests named in the output of pytest, unittest, Maven surefire, go test or Jest."""
    lines = log_tail.splitlines()
    failing: list[str] = []
    for index, line in enumerate(lines):
        if match := _PYTEST().match(line):
            failing.append(_with_message(match.group(1), match.group(2)))
        elif match := _UNITTEST().match(line):
            name, where = match.groups()
            qualified = where if where.endswith(f".{name}") else f"{where}.{name}"
            exception = _following(lines, index + 2, report_formats.EXCEPTION_LINE())
            failing.append(_with_message(qualified, exception))
        elif match := _SUREFIRE().match(line):
            failing.append(_with_message(match.group(1), match.group(2)))
        elif match := _GO().match(line):
            message = _following(lines, index + 1, report_formats.GO_MESSAGE(), within=3)
            failing.append(_with_message(match.group(1), message))
        elif match := _JEST().match(line):
            failing.append(match.group(1).strip())
    return _bounded(failing)


def _following(
    lines: list[str], start: int, pattern: re.Pattern[str], within: int = 200,
) -> str | None:
    """The first line after `start` matching `pattern`, before a separator line."""
    for line in lines[start : start + within]:
        if report_formats.SEPARATOR().match(line):
            return None
        if match := pattern.match(line):
            return match.group(1) if pattern.groups else line.strip()
    return None


def _with_message(name: str, message: str | None) -> str:
    return f"{name.strip()} - {message.strip()}" if message and message.strip() else name.strip()


def _bounded(names: list[str]) -> tuple[str, ...]:
    unique = dict.fromkeys(_one_line(name) for name in names)
    return tuple(unique)[:MAX_FAILING_TESTS]


def _totals_line(text: str) -> str | None:
    """Maven's `Tests run: 3, Failures: 1, Errors: 0` when it reports failures."""
    for line in reversed(text.splitlines()):
        match = _SUREFIRE_TOTALS().search(line)
        if match and (int(match.group(1)) or int(match.group(2))):
            return line.strip()
    return None


def _last_error_line(text: str) -> str | None:
    for line in reversed(text.splitlines()):
        if _ERRORISH().search(line) and not _NOISE().match(line.strip()):
            return line.strip()
    return None


def _last_line(text: str) -> str | None:
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()
    return None


def _cmd(check: PlannedCheck) -> str:
    return f"`{_one_line(check.command, 100)}`"


def _one_line(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def _stat(path: Path | None) -> tuple[int, int, int] | None:
    """Identity of a report file, to tell a report this run wrote from one already there."""
    if path is None:
        return None
    try:
        stat = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size
