"""agentctl: each unittest outcome, passes included, into the directory $AGENTCTL_UNITTEST_REPORT.

Copied as `sitecustomize.py` into a check's private report directory, which is put on
PYTHONPATH: every Python the verification command starts imports it, so `python -m unittest`
(at any verbosity, or any runner built on unittest's TestResult) names every test without
the command being changed. It costs nothing until `unittest.result` is imported: only then is
TestResult wrapped. Each process writes its own file at exit. A project's own sitecustomize
(or the interpreter's) is still imported after this one.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs more than recording a suite
if TYPE_CHECKING:
    from typing import Any

REPORT_ENV = "AGENTCTL_UNITTEST_REPORT"
_RANK = {"PASSED": 0, "SKIPPED": 1, "FAILED": 2, "ERROR": 3}
_seen: dict[str, tuple[str, str | None]] = {}
_PASSED = ("PASSED", None)
_started: dict[int, float] = {}  # by id() of the test running
_seconds: dict[str, float] = {}  # by test id: how long it ran


def _record(test: Any, outcome: str, err: Any = None) -> None:
    try:
        test_id = test.id()
    except Exception:  # noqa: BLE001 - a broken test object must not break the run
        return
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
        if test_id not in _seen:
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
    import atexit

    atexit.register(_write)


def _time(base: Any) -> None:
    """How long each test ran, from startTest to stopTest (its setUp and tearDown included)."""
    from time import perf_counter

    original_start, original_stop = base.startTest, base.stopTest

    def start_test(self: Any, test: Any) -> Any:
        _started[id(test)] = perf_counter()
        return original_start(self, test)

    def stop_test(self: Any, test: Any) -> Any:
        began = _started.pop(id(test), None)
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


def _write() -> None:
    """One line per test: outcome, id, message and seconds, tab-separated (json would cost more
    to import than a quick suite takes to record)."""
    directory = os.environ.get(REPORT_ENV)
    if not directory or not _seen:
        return
    path = os.path.join(directory, f"unittest-{os.getpid()}.tsv")
    try:
        with open(path, "w", encoding="utf-8", errors="replace") as out:
            out.writelines(f"{o}\t{n}\t{_flat(m)}\t{_seconds.get(n, '')}\n"
                           for n, (o, m) in _seen.items())
    except OSError:
        pass  # the log still says what it can


def _flat(message: str | None) -> str:
    return "" if not message else message.replace("\t", " ").replace("\n", " ")


class _Finder:
    """Waits for `unittest.result` to be imported, then wraps its TestResult."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "unittest.result":
            return None
        sys.meta_path.remove(self)
        from importlib.machinery import PathFinder  # loaded at start-up: importlib.util is not

        spec = PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            _wrap(module)

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
        sys.meta_path.insert(0, _Finder())
    _chain()
