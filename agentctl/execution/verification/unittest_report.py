"""Each unittest outcome, passes included, appended to the file named by $TEST_OUTCOMES_LOG.

Copied as `sitecustomize.py` into a check's private report directory, which is put on
PYTHONPATH: every Python the verification command starts imports it, so `python -m unittest`
(at any verbosity, or any runner built on unittest's TestResult) names every test without
the command being changed. It costs nothing until `unittest.result` is imported: only then is
TestResult wrapped (and the variables taken out of the environment, before any test module is
imported). A process appends a start mark when it records its first test, through a descriptor
it keeps, and its results (each test's outcome, message and how long it ran, startTest to
stopTest) with an end mark at exit: a process whose exit handlers were cleared
(`atexit._clear()`) or that ended early (`os._exit`) leaves a start without an end. unittest's
result methods (and TextTestResult's, TestCase.run) are noted when their modules load (after
this hook wrapped them) and compared at exit; what changed is written too. A project's own
sitecustomize (or the interpreter's) is still imported after this one.

For a rerun it also runs only the tests named in the file $TEST_LOG_SELECTION names: a
discovery loads them by name instead (only their modules are imported), falling back to the
whole discovery where a name does not load; the outermost suite a process runs is cut down to
them. With $TEST_LOG_RERUNS = N it reruns each test that failed, at the end of that suite, in
the same process, up to N times until it passes (as the pytest plugin does): a rerun costs that
test's time (and its class's and module's fixtures), not another start-up and discovery. The
reruns' outcomes are written beside the results, before the end mark. A module that failed to
import is not rerun: it is not flaky.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs more than recording a suite
if TYPE_CHECKING:
    from typing import Any

REPORT_ENV = "TEST_OUTCOMES_LOG"
# The hook's own names, not the pytest plugins' (TEST_SELECTION, TEST_RERUNS): pytest imports
# unittest, and the hook takes its variables out of the environment, before its plugins load.
SELECT_ENV = "TEST_LOG_SELECTION"
RERUN_ENV = "TEST_LOG_RERUNS"
START_MARK = "start"
END_MARK = "end"
TAMPERED_MARK = "changed"
RERAN_MARK = "reran"
_METHODS = ("addSuccess", "addFailure", "addError", "addSkip", "addExpectedFailure",
            "addUnexpectedSuccess", "addSubTest")
# path, pid, fd (once a test was recorded), noted identities; the selection and reruns asked
_state: dict[str, Any] = {}
_RANK = {"PASSED": 0, "SKIPPED": 1, "FAILED": 2, "ERROR": 3}
_seen: dict[str, tuple[str, str | None]] = {}
_PASSED = ("PASSED", None)
# Stand-ins for what could not be loaded or set up: nothing to rerun.
_NOT_RERUN = ("_FailedTest", "ModuleImportFailure", "_ErrorHolder")
_failing: dict[str, Any] = {}  # tests that failed in the outermost suite under way, by id
_reran: dict[str, list[str]] = {}
_run = {"outermost": False, "rerunning": False}
_began: dict[int, float] = {}  # by id() of each test under way: when startTest saw it
_seconds: dict[str, float] = {}  # by test id: how long it ran, startTest to stopTest


def _started() -> None:
    """The start mark, once, at this process's first recorded test."""
    if "fd" in _state or not _state.get("path") or _state.get("pid") != os.getpid():
        return  # a forked worker (multiprocessing ends it with os._exit): its parent reports
    try:
        _state["fd"] = os.open(_state["path"], os.O_WRONLY | os.O_APPEND | os.O_CREAT
                               | os.O_CLOEXEC, 0o600)
        _emit(f"{START_MARK}\t{os.getpid()}\n")
    except OSError:
        _state["fd"] = None


def _emit(text: str) -> None:
    data = text.encode("utf-8", "replace")
    fd = _state.get("fd")
    while data and fd is not None:
        data = data[os.write(fd, data):]


def _watched() -> list[tuple[str, Any]]:
    """The functions that decide what a test's outcome is said to be."""
    watched: list[tuple[str, Any]] = [("os._exit", os._exit)]
    # what runs a test and catches what it raised too: a test whose exception is swallowed, or
    # whose body never runs, is a success with nothing to give it away
    for module, owner, names in (
            ("unittest.result", "TestResult", _METHODS),
            ("unittest.runner", "TextTestResult", _METHODS),
            ("unittest.case", "TestCase", ("run", "_callTestMethod")),
            ("unittest.case", "_Outcome", ("testPartExecutor",))):
        cls = getattr(sys.modules.get(module), owner, None)
        if cls is None:
            continue
        for name in names:
            watched.append((f"{module}.{owner}.{name}", vars(cls).get(name)))
    return watched


def _identity(value: Any) -> tuple[Any, Any]:
    return value, getattr(value, "__code__", None)


def _note() -> None:
    noted = _state.setdefault("noted", {})
    for name, value in _watched():
        noted.setdefault(name, _identity(value))


def _changed() -> list[str]:
    noted = _state.get("noted", {})
    changed = []
    for name, value in _watched():
        was = noted.get(name)
        now = _identity(value)
        if was is not None and (was[0] is not now[0] or was[1] is not now[1]):
            changed.append(name)
    return changed


def _record(test: Any, outcome: str, err: Any = None) -> None:
    if _run["rerunning"]:
        return  # a rerun's outcome is read from its own result
    _started()
    try:
        test_id = test.id()
    except Exception:  # noqa: BLE001 - a broken test object must not break the run
        return
    if outcome in ("FAILED", "ERROR") and type(test).__name__ not in _NOT_RERUN:
        _failing.setdefault(test_id, test)
    message = None
    if err is not None and isinstance(err, tuple) and len(err) == 3:
        kind, value = err[0], err[1]
        text = str(value).strip().splitlines()
        message = f"{getattr(kind, '__name__', kind)}: {text[0]}" if text else \
            str(getattr(kind, "__name__", kind))
    old = _seen.get(test_id)
    if old is None or _RANK[outcome] > _RANK[old[0]]:
        _seen[test_id] = (outcome, message)


def _wrap(result_module: Any) -> None:
    base = result_module.TestResult

    def hook(name: str, outcome: str, with_err: bool) -> None:
        original = getattr(base, name)

        def wrapper(self: Any, test: Any, *args: Any) -> Any:
            if name == "addSubTest":
                if args[1] is not None:
                    _record(test, "FAILED", args[1])
            else:
                _record(test, outcome, args[0] if with_err and args else None)
            return original(self, test, *args)

        wrapper.__wrapped__ = original  # type: ignore[attr-defined]
        setattr(base, name, wrapper)

    original_success = base.addSuccess

    def add_success(self: Any, test: Any) -> Any:
        """A pass, the common case, kept short: nothing outranks a result already seen."""
        try:
            test_id = test.id()
        except Exception:  # noqa: BLE001 - a broken test object must not break the run
            return original_success(self, test)
        if test_id not in _seen and not _run["rerunning"]:
            _started()
            _seen[test_id] = _PASSED
        return original_success(self, test)

    add_success.__wrapped__ = original_success  # type: ignore[attr-defined]
    base.addSuccess = add_success
    _time(base)
    for name, outcome, with_err in (
            ("addFailure", "FAILED", True),
            ("addError", "ERROR", True), ("addSkip", "SKIPPED", False),
            ("addExpectedFailure", "PASSED", False), ("addUnexpectedSuccess", "FAILED", False),
            ("addSubTest", "FAILED", True)):
        hook(name, outcome, with_err)
    _note()
    import atexit

    atexit.register(_write)


def _time(base: Any) -> None:
    """How long each test ran, from startTest to stopTest (its setUp and tearDown included), as
    pytest's report gives it. Wrapped before the result methods are noted, like the others; the
    integrity check does not watch these two: they say how long, never what the outcome was,
    and a project that replaces them leaves its tests without a duration, not with a false
    outcome. A rerun's time is not added: the first run's outcome is the one reported."""
    from time import perf_counter  # built in: costs nothing to import

    original_start, original_stop = base.startTest, base.stopTest

    def start_test(self: Any, test: Any) -> Any:
        if not _run["rerunning"]:
            _began[id(test)] = perf_counter()
        return original_start(self, test)

    def stop_test(self: Any, test: Any) -> Any:
        began = _began.pop(id(test), None)
        if began is not None:
            try:
                test_id = test.id()
            except Exception:  # noqa: BLE001 - a broken test object must not break the run
                test_id = None
            if test_id is not None:
                _seconds[test_id] = _seconds.get(test_id, 0.0) + perf_counter() - began
        return original_stop(self, test)

    start_test.__wrapped__ = original_start  # type: ignore[attr-defined]
    stop_test.__wrapped__ = original_stop  # type: ignore[attr-defined]
    base.startTest, base.stopTest = start_test, stop_test


def _wrap_suite(suite_module: Any) -> None:
    """The outermost suite a process runs: cut down to the selected tests, and its failing
    tests rerun once it has run. A suite a test runs of its own (a test of a test runner) is
    left alone."""
    original = suite_module.TestSuite.run
    wanted = _selected()
    reruns = _state.get("reruns", 0)

    def run(self: Any, result: Any, debug: bool = False) -> Any:
        if _run["outermost"] or getattr(result, "_testRunEntered", False):
            return original(self, result, debug)
        _run["outermost"] = True
        _failing.clear()
        try:
            if wanted is not None:
                _keep(self, wanted)
            ran = original(self, result, debug)
            if reruns and _failing:
                _rerun(suite_module, reruns)
            return ran
        finally:
            _run["outermost"] = False

    run.__wrapped__ = original  # type: ignore[attr-defined]
    suite_module.TestSuite.run = run


def _wrap_loader(loader_module: Any) -> None:
    """`discover` loads only the selected tests, by name from the top-level folder discovery
    would put on sys.path; where any of them does not load that way (a `load_tests` hook, a
    start given as a module name), the whole discovery runs and the suite is cut down after."""
    loader = loader_module.TestLoader
    original = loader.discover
    wanted = _selected()

    def discover(self: Any, start_dir: str, pattern: str = "test*.py",
                 top_level_dir: str | None = None) -> Any:
        top = top_level_dir if top_level_dir is not None else start_dir
        if not wanted or not os.path.isdir(top):
            return original(self, start_dir, pattern, top_level_dir)
        top = os.path.abspath(top)
        errors, path = list(self.errors), list(sys.path)
        if top not in sys.path:
            sys.path.insert(0, top)
        try:
            suite = self.loadTestsFromNames(sorted(wanted))
            if not self.errors[len(errors):] and not any(
                    type(t).__name__ in _NOT_RERUN for t in _cases(suite)):
                self._top_level_dir = top
                return suite
        except Exception:  # noqa: BLE001 - whatever a name does, the discovery can still run
            pass
        self.errors[:] = errors
        sys.path[:] = path
        return original(self, start_dir, pattern, top_level_dir)

    discover.__wrapped__ = original  # type: ignore[attr-defined]
    loader.discover = discover


def _cases(suite: Any) -> Any:
    for test in suite:
        if hasattr(test, "_tests"):
            yield from _cases(test)
        else:
            yield test


def _selected() -> set[str] | None:
    """The tests the selection file names (read once), None without one."""
    if "wanted" not in _state:
        path, _state["wanted"] = _state.get("select"), None
        try:
            if path:
                with open(path, encoding="utf-8") as names:
                    _state["wanted"] = {line for line in names.read().splitlines() if line}
        except OSError:
            pass  # every test runs: more than asked, never less
    wanted: set[str] | None = _state["wanted"]
    return wanted


def _keep(suite: Any, wanted: set[str]) -> None:
    kept = []
    for test in suite:
        if hasattr(test, "_tests"):
            _keep(test, wanted)
            if test.countTestCases():
                kept.append(test)
        else:
            try:
                if test.id() in wanted:
                    kept.append(test)
            except Exception:  # noqa: BLE001 - a broken test object must not break the run
                kept.append(test)
    suite._tests = kept


def _rerun(suite_module: Any, times: int) -> None:
    """Each failing test again, alone in a suite of its own (so its class's and module's
    fixtures are set up and torn down around it), with a result of its own."""
    from unittest.result import TestResult

    failing = list(_failing.items())
    _failing.clear()
    _run["rerunning"] = True
    try:
        for test_id, test in failing:
            outcomes = _reran.setdefault(test_id, [])
            for _ in range(times):
                result = TestResult()
                suite_module.TestSuite([test]).run(result)
                outcomes.append("ERROR" if result.errors else
                                "FAILED" if result.failures or result.unexpectedSuccesses else
                                "SKIPPED" if result.skipped else "PASSED")
                if outcomes[-1] in ("PASSED", "SKIPPED"):
                    break
    finally:
        _run["rerunning"] = False
    stream = sys.stderr
    stream.write("\nagentctl: failing tests rerun in this process\n")
    stream.writelines(f"{test_id}: {', '.join(_reran[test_id])}\n" for test_id, _ in failing)
    stream.flush()


def _write() -> None:
    """One line per test: outcome, id, message and seconds, tab-separated (json would cost
    more to import than a quick suite takes to record), each rerun test's outcomes, what changed, and
    the end mark: one write. A process that recorded no test but whose result methods were
    changed (replaced before the first test could be recorded) still says so."""
    if "fd" not in _state and _changed():
        _started()
    if _state.get("fd") is None or _state.get("pid") != os.getpid():
        return
    lines = [f"{o}\t{n}\t{_flat(m)}\t{_took(n)}\n" for n, (o, m) in _seen.items()]
    lines += [f"{RERAN_MARK}\t{_flat(n)}\t{chr(9).join(o)}\n" for n, o in _reran.items() if o]
    lines += [f"{TAMPERED_MARK}\t{name}\n" for name in _changed()]
    try:
        _emit("".join(lines) + f"{END_MARK}\t{os.getpid()}\n")
        os.close(_state.pop("fd"))
    except OSError:
        pass  # the log still says what it can


def _noted(module: Any) -> None:
    """`unittest.runner` loaded (after `unittest.case`): note what both hold."""
    _note()


def _took(test_id: str) -> str:
    seconds = _seconds.get(test_id)
    return "" if seconds is None else f"{seconds:.6f}"


def _flat(message: str | None) -> str:
    return "" if not message else message.replace("\t", " ").replace("\n", " ")


class _Finder:
    """Waits for `unittest.result` to be imported, then wraps its TestResult (and, for a
    rerun, `unittest.suite`'s TestSuite and `unittest.loader`'s discover) and notes what
    `unittest.runner` holds; each wrapped before its identity is noted."""

    def __init__(self, wraps: dict[str, Any]) -> None:
        self.wraps = wraps

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        wrap = self.wraps.pop(name, None)
        if wrap is None:
            return None
        if not self.wraps:
            sys.meta_path.remove(self)
        if name == "unittest.result":
            _state["path"], _state["pid"] = os.environ.pop(REPORT_ENV, None), os.getpid()
            _state["select"] = os.environ.pop(SELECT_ENV, None)
            reruns = os.environ.pop(RERUN_ENV, None) or "0"
            _state["reruns"] = int(reruns) if reruns.isdigit() else 0
        from importlib.machinery import PathFinder  # loaded at start-up: importlib.util is not

        spec = PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            wrap(module)

        loader.exec_module = exec_module
        return spec


def _chain() -> None:
    """Import the sitecustomize this one shadows, if there is one."""
    here = os.path.dirname(os.path.abspath(__file__))
    module = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import sitecustomize  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        pass
    finally:
        sys.path[:] = saved
        if module is not None:
            sys.modules.setdefault("sitecustomize", module)


if __name__ == "sitecustomize":
    if os.environ.get(REPORT_ENV) and "unittest.result" not in sys.modules:
        _wraps: dict[str, Any] = {"unittest.result": _wrap, "unittest.runner": _noted}
        if os.environ.get(SELECT_ENV) or os.environ.get(RERUN_ENV):
            _wraps["unittest.suite"] = _wrap_suite
        if os.environ.get(SELECT_ENV):
            _wraps["unittest.loader"] = _wrap_loader
        sys.meta_path.insert(0, _Finder(_wraps))
    _chain()
