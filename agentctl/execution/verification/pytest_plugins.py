"""The two pytest plugins agentctl puts on a check's PYTHONPATH, as the source text that
`test_reports.ReportDir` writes into the check's private report folder: one runs only the tests
a rerun names, the other records each test's outcome (and reruns the failing ones in process).
They run inside the project's pytest, so they import nothing of agentctl.
"""

from agentctl.domain.final_failures import COLLECTION_ERROR

# Neutral names: nothing the project's code can look for says that agentctl is watching (a
# check is a run like any other), and the plugins take their variables out of the environment
# as soon as they read them.
SELECT_PLUGIN = "_selected_tests"
SELECT_ENV = "TEST_SELECTION"
REPORT_PLUGIN = "_test_outcomes"
REPORT_ENV = "TEST_OUTCOMES_FILE"
RERUN_ENV = "TEST_RERUNS"
# What an xdist worker is told through its workerinput (its environment lacks the variables)
WORKER_PATH = "test_outcomes_file"
WORKER_RERUNS = "test_reruns"
WORKER_TAMPERED = "test_runner_changed"
# what a call report that says passed while carrying a failure's traceback is named as
FORGED_REPORT = "pytest_runtest_makereport (a report said passed with a failure's traceback)"
START_MARK = "start"
END_MARK = "end"

# The selection is a file (pytest node ids, one a line), never the environment or the command
# line, which have limits of their own: a rerun may name thousands of tests.
SELECT_SOURCE = f'''"""Run only the tests named in the file ${SELECT_ENV} names, one a line."""
import os

import pytest

_PATH = os.environ.pop("{SELECT_ENV}", None)
_WANTED = set()


def _read(path):
    try:
        with open(path, encoding="utf-8") as names:
            _WANTED.update(filter(None, names.read().splitlines()))
    except OSError:
        pass  # every test runs: more than asked, never less


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):  # xdist's: a worker's environment no longer has the variable
    node.workerinput["{SELECT_ENV.lower()}"] = _PATH


def pytest_configure(config):
    given = getattr(config, "workerinput", {{}}).get("{SELECT_ENV.lower()}")
    if given:
        _read(given)


if _PATH:
    _read(_PATH)


def pytest_collection_modifyitems(config, items):
    wanted = _WANTED
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
# The report is written through a descriptor opened when pytest loads the plugin (with `-p`,
# before any conftest or project module), appended to the file agentctl created and holds open
# itself: the project deleting or replacing the path, or the variable, changes nothing. A start
# mark is written at once and an end mark last, so a process that ends early (`os._exit`) leaves
# a report agentctl knows is unfinished. pytest's reporting functions are noted at load and
# compared after each test and at the end: whatever changed them is written into the report.
REPORT_SOURCE = f'''"""Each test's outcome as JSON into ${REPORT_ENV}; failures rerun."""
import json
import os

import pytest
import _pytest.python
import _pytest.reports
import _pytest.runner
import _pytest.terminal
import _pytest.unittest

_RANK = {{"PASSED": 0, "SKIPPED": 1, "FAILED": 2, "ERROR": 3}}
_PATH = os.environ.pop("{REPORT_ENV}", None)
_RERUNS = int(os.environ.pop("{RERUN_ENV}", None) or 0)
_seen = {{}}
_reruns = {{}}
_own_reports = set()  # on an xdist worker: tests that log reports of their own (subtests)
_rerun = {{}}  # while a test is rerun: whether anything it logged of its own failed
_tampered = []
_FORGED = {FORGED_REPORT!r}
_out = []  # the open report: [descriptor], until its end mark is written
_PID = os.getpid()


def _open():
    try:
        fd = os.open(_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    _out.append(fd)
    _emit("{START_MARK}\\n")


def _own():
    """Whether this is the process that opened the report (not a child a test forked)."""
    return bool(_out) and _PID == os.getpid()


def _emit(text):
    data = text.encode("utf-8", "replace")
    while data and _out:
        data = data[os.write(_out[0], data):]


def _watched():
    """(name, namespace, key): each function that decides what a test is said to have done,
    where it is looked up (a class's or a module's live namespace)."""
    reports, runner, terminal = _pytest.reports, _pytest.runner, _pytest.terminal
    report, base = vars(reports.TestReport), vars(reports.BaseReport)
    return (
        # what runs a test and catches what it raised: a wrapper that swallows the exception
        # makes a failing test a pass with no traceback to give it away
        ("_pytest.runner.CallInfo.from_call", vars(runner.CallInfo), "from_call"),
        ("_pytest.python.Function.runtest", vars(_pytest.python.Function), "runtest"),
        ("_pytest.unittest.TestCaseFunction.runtest",
         vars(_pytest.unittest.TestCaseFunction), "runtest"),
        ("_pytest.reports.TestReport.from_item_and_call", report, "from_item_and_call"),
        ("_pytest.reports.TestReport.__init__", report, "__init__"),
        ("_pytest.reports.BaseReport._to_json", base, "_to_json"),
        ("_pytest.reports.BaseReport.passed", base, "passed"),
        ("_pytest.reports.BaseReport.failed", base, "failed"),
        ("_pytest.runner.call_and_report", vars(runner), "call_and_report"),
        ("_pytest.runner.runtestprotocol", vars(runner), "runtestprotocol"),
        ("_pytest.runner.pytest_runtest_protocol", vars(runner), "pytest_runtest_protocol"),
        ("_pytest.terminal.TerminalReporter.pytest_runtest_logreport",
         vars(terminal.TerminalReporter), "pytest_runtest_logreport"),
        ("pytest_runtest_logreport", globals(), "pytest_runtest_logreport"),
        ("pytest_sessionfinish", globals(), "pytest_sessionfinish"),
        ("os._exit", vars(os), "_exit"),
    )


def _code(value):
    inner = getattr(value, "__func__", None) or getattr(value, "fget", None) or value
    return getattr(inner, "__code__", None)


def _check(full=False):
    """After each test, whether each function is still the one noted (a few microseconds);
    at the end, also whether its code was swapped in place."""
    for name, namespace, key, value, code in _NOTED:
        now = namespace.get(key)
        if (now is not value or (full and _code(now) is not code)) and name not in _tampered:
            _tampered.append(name)
_durations = {{}}  # seconds per test: setup, call and teardown of its first run


def _outcome(report):
    if report.when == "call":
        outcome = {{"passed": "PASSED", "failed": "FAILED"}}.get(report.outcome, "SKIPPED")
        if hasattr(report, "wasxfail"):
            outcome = "SKIPPED" if report.outcome == "skipped" else "FAILED"
        if outcome == "PASSED" and report.longrepr:
            # pytest makes a passed report without one: a hook turned a failure into a pass
            if _FORGED not in _tampered:
                _tampered.append(_FORGED)
            outcome = "FAILED"
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
    # a module (or class, or conftest) that failed to load: an error of its own (its tests
    # are not absent), never rerun
    if report.failed:
        lines = [l[1:].strip() for l in str(report.longrepr).splitlines() if l.startswith("E ")]
        first = lines[-1] if lines else str(report.longrepr).strip().split("\\n")[0]
        _seen[report.nodeid or "."] = ("ERROR", "{COLLECTION_ERROR}" + first[:2000])


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report, config):
    if _rerun:  # a subtest of a rerun: neither printed nor counted
        return "", "", ""
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):  # xdist's: a worker's environment no longer has the variables
    node.workerinput["{WORKER_PATH}"] = _PATH
    node.workerinput["{WORKER_RERUNS}"] = _RERUNS


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    for name in getattr(node, "workeroutput", {{}}).get("{WORKER_TAMPERED}", ()):
        if name not in _tampered:
            _tampered.append(name)


def pytest_configure(config):
    global _PATH, _RERUNS
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        _PATH, _RERUNS = worker.get("{WORKER_PATH}"), int(worker.get("{WORKER_RERUNS}") or 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    yield
    _check()
    worker = hasattr(item.config, "workerinput")
    if not _RERUNS or (worker and item.nodeid in _own_reports) or \\
            _seen.get(item.nodeid, ("PASSED",))[0] not in ("FAILED", "ERROR"):
        return
    outcomes = []
    option, style = item.config.option, getattr(item.config.option, "tbstyle", "auto")
    option.tbstyle = "line"
    try:
        for _ in range(_RERUNS):
            _rerun["failed"] = False
            seen = [_outcome(r) for r in _RUNTESTPROTOCOL(item, nextitem=nextitem, log=False)]
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
    path = _PATH
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
    _check(full=True)
    worker = getattr(session.config, "workerinput", None)
    if worker is not None:  # an xdist worker: the main process writes the report
        session.config.workeroutput["{WORKER_TAMPERED}"] = list(_tampered)
        if _PATH and _reruns:
            with open(f"{{_PATH}}.{{worker['workerid']}}", "w", encoding="utf-8") as out:
                json.dump(_reruns, out)
        return
    if not _own():
        return
    rows = [[n, o, m, _reruns.get(n, []), round(_durations.get(n, 0.0), 6)]
            for n, (o, m) in _seen.items()]
    _emit(json.dumps({{"results": rows, "tampered": _tampered}}) + "\\n{END_MARK}\\n")
    os.close(_out.pop())


def pytest_unconfigure(config):
    """A pytest that ran no session (`--version`, a usage error) ends its report too."""
    if _own():
        _emit(json.dumps({{"results": [], "tampered": _tampered, "session": False}})
              + "\\n{END_MARK}\\n")
        os.close(_out.pop())


_RUNTESTPROTOCOL = _pytest.runner.runtestprotocol
_NOTED = tuple((name, namespace, key, namespace.get(key), _code(namespace.get(key)))
               for name, namespace, key in _watched())
if _PATH:
    _open()
'''
