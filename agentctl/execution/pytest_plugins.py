"""The two pytest plugins agentctl puts on a check's PYTHONPATH, as the source text that
`test_reports.ReportDir` writes into the check's private report folder: one runs only the tests
a rerun names, the other records each test's outcome (and reruns the failing ones in process).
They run inside the project's pytest, so they import nothing of agentctl.
"""

SELECT_PLUGIN = "agentctl_select_tests"
SELECT_ENV = "AGENTCTL_SELECT_TESTS"
REPORT_PLUGIN = "agentctl_test_report"
REPORT_ENV = "AGENTCTL_TEST_REPORT"
RERUN_ENV = "AGENTCTL_RERUN_FAILURES"

SELECT_SOURCE = f'''"""agentctl: run only the tests named in ${SELECT_ENV} (pytest node ids, one a line)."""
import os


def pytest_collection_modifyitems(config, items):
    wanted = set(filter(None, os.environ.get("{SELECT_ENV}", "").splitlines()))
    if not wanted:
        return
    kept = [item for item in items if item.nodeid in wanted]
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in wanted])
    items[:] = kept
'''

# pytest's own JUnit writer costs about a tenth of a 1,000-test suite's time; this records the
# same outcomes (by node id, with the first line of each failure) for next to nothing. With
# ${RERUN_ENV} = N it also reruns each failing test at once, in the same process, up to N times
# until it passes (as Surefire and pytest-rerunfailures do): a rerun costs that test's time, not
# another start-up and collection, and no long traceback is formatted for it (only its outcome
# is kept). Reruns are not logged as results (the first run's stand) but listed in the terminal
# summary, so the log shows them too. What a test logs of its own while rerun (its subtests'
# reports) is shown and counted nowhere, but one that failed fails the rerun. Under xdist each
# worker reruns its own failures and writes them beside the report (`.worker-id`), where the main
# process reads them for its summary; a worker sends whatever is logged to the main process, so
# there a test with subtests, or one that logged anything while rerun, is left to processes of
# their own.
REPORT_SOURCE = f'''"""agentctl: each test's outcome as JSON into ${REPORT_ENV}; failures rerun."""
import json
import os

import pytest

_RANK = {{"PASSED": 0, "SKIPPED": 1, "FAILED": 2, "ERROR": 3}}
_RERUNS = int(os.environ.get("{RERUN_ENV}") or 0)
_seen = {{}}
_reruns = {{}}
_own_reports = set()  # on an xdist worker: tests that log reports of their own (subtests)
_rerun = {{}}  # while a test is rerun: whether anything it logged of its own failed
_durations = {{}}  # seconds per test: setup, call and teardown of its first run


def _outcome(report):
    if report.when == "call":
        outcome = {{"passed": "PASSED", "failed": "FAILED"}}.get(report.outcome, "SKIPPED")
        if hasattr(report, "wasxfail"):
            outcome = "SKIPPED" if report.outcome == "skipped" else "FAILED"
        return outcome
    if report.outcome == "failed":
        return "ERROR"
    return "SKIPPED" if report.outcome == "skipped" else None


def pytest_runtest_logreport(report):
    if _rerun:
        _rerun["failed"] = _rerun["failed"] or report.failed
        _own_reports.add(report.nodeid)
        return
    if "subtest" in type(report).__name__.lower():
        _own_reports.add(report.nodeid)
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + (report.duration or 0.0)
    outcome = _outcome(report)
    if outcome is None:
        _seen.setdefault(report.nodeid, ("PASSED", None))
        return
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    message = getattr(crash, "message", None) or (str(report.longrepr)[:2000]
                                                   if report.longrepr else None)
    old = _seen.get(report.nodeid)
    if old is None or _RANK[outcome] > _RANK[old[0]]:
        _seen[report.nodeid] = (outcome, message)


def pytest_collectreport(report):
    # a module that cannot be collected (an import error) failed: its tests are not absent
    if report.failed and report.nodeid:
        crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
        message = getattr(crash, "message", None) or (str(report.longrepr)[-2000:]
                                                       if report.longrepr else None)
        _seen[report.nodeid] = ("ERROR", message)


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report, config):
    if _rerun:  # a subtest of a rerun: neither printed nor counted
        return "", "", ""
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    yield
    worker = hasattr(item.config, "workerinput")
    if not _RERUNS or (worker and item.nodeid in _own_reports) or \\
            _seen.get(item.nodeid, ("PASSED",))[0] not in ("FAILED", "ERROR"):
        return
    from _pytest.runner import runtestprotocol

    outcomes = []
    option, style = item.config.option, getattr(item.config.option, "tbstyle", "auto")
    option.tbstyle = "line"
    try:
        for _ in range(_RERUNS):
            _rerun["failed"] = False
            seen = [_outcome(r) for r in runtestprotocol(item, nextitem=nextitem, log=False)]
            if _rerun["failed"]:
                seen.append("FAILED")
            outcomes.append(max(filter(None, seen), key=_RANK.__getitem__, default="PASSED"))
            if outcomes[-1] in ("PASSED", "SKIPPED"):
                break
    finally:
        _rerun.clear()
        option.tbstyle = style
    if not (worker and item.nodeid in _own_reports):
        _reruns[item.nodeid] = outcomes


def pytest_terminal_summary(terminalreporter):
    reruns = dict(_reruns)
    path = os.environ.get("{REPORT_ENV}")
    try:
        for name in sorted(os.listdir(os.path.dirname(path))) if path else ():
            if name.startswith(os.path.basename(path) + "."):  # an xdist worker's
                with open(os.path.join(os.path.dirname(path), name), encoding="utf-8") as worker:
                    reruns.update(json.load(worker))
    except (OSError, ValueError):
        pass  # agentctl reads them again, and says so where it cannot
    if reruns:
        terminalreporter.write_sep("-", "agentctl: failing tests rerun in this process")
        for nodeid, outcomes in reruns.items():
            terminalreporter.write_line(f"{{nodeid}}: {{', '.join(outcomes)}}")


def pytest_sessionfinish(session):
    path = os.environ.get("{REPORT_ENV}")
    worker = getattr(session.config, "workerinput", None)
    if not path or (worker and not _reruns):  # an xdist worker: the main one writes the rest
        return
    with open(f"{{path}}.{{worker['workerid']}}" if worker else path, "w", encoding="utf-8") as out:
        json.dump(_reruns if worker else
                  [[n, o, m, _reruns.get(n, []), round(_durations.get(n, 0.0), 6)]
                   for n, (o, m) in _seen.items()], out)
'''
