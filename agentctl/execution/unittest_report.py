"""agentctl: each unittest outcome, passes included, into the directory $AGENTCTL_UNITTEST_REPORT.

Copied as `sitecustomize.py` into a check's private report directory, which is put on
PYTHONPATH: every Python the verification command starts imports it, so `python -m unittest`
(at any verbosity, or any runner built on unittest's TestResult) names every test without
the command being changed. It costs nothing until `unittest.result` is imported: only then is
TestResult wrapped. Each process writes its own file at exit. A project's own sitecustomize
(or the interpreter's) is still imported after this one.

For a rerun it also runs only the tests named in the file $AGENTCTL_SELECT_TESTS names: a
discovery loads them by name instead (only their modules are imported), falling back to the
whole discovery where a name does not load; the outermost suite a process runs is cut down to
them. With
$AGENTCTL_RERUN_FAILURES = N reruns each test that failed, at the end of that suite, in the same
process, up to N times until it passes (as the pytest plugin does): a rerun costs that test's
time (and its class's and module's fixtures), not another start-up and discovery. A module
that failed to import is not rerun: it is not flaky.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs more than recording a suite
if TYPE_CHECKING:
    from typing import Any

REPORT_ENV = "AGENTCTL_UNITTEST_REPORT"
SELECT_ENV = "AGENTCTL_SELECT_TESTS"
RERUN_ENV = "AGENTCTL_RERUN_FAILURES"
RERUNS_FILE = "reran-unittest"  # beside the report: `reran-unittest-<pid>.tsv`
_RANK = {"PASSED": 0, "SKIPPED": 1, "FAILED": 2, "ERROR": 3}
_seen: dict[str, tuple[str, str | None]] = {}
_PASSED = ("PASSED", None)
# Stand-ins for what could not be loaded or set up: nothing to rerun.
_NOT_RERUN = ("_FailedTest", "ModuleImportFailure", "_ErrorHolder")
_failing: dict[str, Any] = {}  # tests that failed in the outermost suite under way, by id
_reran: dict[str, list[str]] = {}
_state = {"outermost": False, "rerunning": False}


def _record(test: Any, outcome: str, err: Any = None) -> None:
    if _state["rerunning"]:
        return  # a rerun's outcome is read from its own result
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
        if test_id not in _seen and not _state["rerunning"]:
            _seen[test_id] = _PASSED
        return original_success(self, test)

    add_success.__wrapped__ = original_success  # type: ignore[attr-defined]
    base.addSuccess = add_success
    for name, outcome, with_err in (
            ("addFailure", "FAILED", True),
            ("addError", "ERROR", True), ("addSkip", "SKIPPED", False),
            ("addExpectedFailure", "PASSED", False), ("addUnexpectedSuccess", "FAILED", False),
            ("addSubTest", "FAILED", True)):
        hook(name, outcome, with_err)
    import atexit

    atexit.register(_write)


def _wrap_suite(suite_module: Any) -> None:
    """The outermost suite a process runs: cut down to the selected tests, and its failing
    tests rerun once it has run. A suite a test runs of its own (a test of a test runner) is
    left alone."""
    original = suite_module.TestSuite.run
    wanted = _selected()
    reruns = int(os.environ.get(RERUN_ENV) or 0)

    def run(self: Any, result: Any, debug: bool = False) -> Any:
        if _state["outermost"] or getattr(result, "_testRunEntered", False):
            return original(self, result, debug)
        _state["outermost"] = True
        _failing.clear()
        try:
            if wanted is not None:
                _keep(self, wanted)
            ran = original(self, result, debug)
            if reruns and _failing:
                _rerun(suite_module, reruns)
            return ran
        finally:
            _state["outermost"] = False

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
    path = os.environ.get(SELECT_ENV)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as names:
            return {line for line in names.read().splitlines() if line}
    except OSError:
        return None  # every test runs: more than asked, never less


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
    _state["rerunning"] = True
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
        _state["rerunning"] = False
    stream = sys.stderr
    stream.write("\nagentctl: failing tests rerun in this process\n")
    stream.writelines(f"{test_id}: {', '.join(_reran[test_id])}\n" for test_id, _ in failing)
    stream.flush()


def _write() -> None:
    """One line per test: outcome, id and message, tab-separated (json would cost more to
    import than a quick suite takes to record); the reruns' outcomes in a file of their own."""
    directory = os.environ.get(REPORT_ENV)
    if not directory or not _seen:
        return
    path = os.path.join(directory, f"unittest-{os.getpid()}.tsv")
    reran = os.path.join(directory, f"{RERUNS_FILE}-{os.getpid()}.tsv")
    try:
        with open(path, "w", encoding="utf-8", errors="replace") as out:
            out.writelines(f"{o}\t{n}\t{_flat(m)}\n" for n, (o, m) in _seen.items())
        if _reran:
            with open(reran, "w", encoding="utf-8", errors="replace") as out:
                out.writelines(f"{_flat(n)}\t{chr(9).join(o)}\n" for n, o in _reran.items())
    except OSError:
        pass  # the log still says what it can


def _flat(message: str | None) -> str:
    return "" if not message else message.replace("\t", " ").replace("\n", " ")


class _Finder:
    """Waits for `unittest.result` to be imported, then wraps its TestResult (and, for a
    rerun, `unittest.suite`'s TestSuite)."""

    def __init__(self, wraps: dict[str, Any]) -> None:
        self.wraps = wraps

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        wrap = self.wraps.pop(name, None)
        if wrap is None:
            return None
        if not self.wraps:
            sys.meta_path.remove(self)
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
        _wraps: dict[str, Any] = {"unittest.result": _wrap}
        if os.environ.get(SELECT_ENV) or os.environ.get(RERUN_ENV):
            _wraps["unittest.suite"] = _wrap_suite
        if os.environ.get(SELECT_ENV):
            _wraps["unittest.loader"] = _wrap_loader
        sys.meta_path.insert(0, _Finder(_wraps))
    _chain()
