"""Each unittest outcome, passes included, appended to the file named by $TEST_OUTCOMES_LOG.

Copied as `sitecustomize.py` into a check's private report directory, which is put on
PYTHONPATH: every Python the verification command starts imports it, so `python -m unittest`
(at any verbosity, or any runner built on unittest's TestResult) names every test without
the command being changed. It costs nothing until `unittest.result` is imported: only then is
TestResult wrapped (and the variable taken out of the environment, before any test module is
imported). A process appends a start mark when it records its first test, through a descriptor
it keeps, and its results with an end mark at exit: a process whose exit handlers were cleared
(`atexit._clear()`) or that ended early (`os._exit`) leaves a start without an end. unittest's
result methods (and TextTestResult's, TestCase.run) are noted when their modules load and
compared at exit; what changed is written too. A project's own sitecustomize (or the
interpreter's) is still imported after this one.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs more than recording a suite
if TYPE_CHECKING:
    from typing import Any

REPORT_ENV = "TEST_OUTCOMES_LOG"
START_MARK = "start"
END_MARK = "end"
TAMPERED_MARK = "changed"
_METHODS = ("addSuccess", "addFailure", "addError", "addSkip", "addExpectedFailure",
            "addUnexpectedSuccess", "addSubTest")
_state: dict[str, Any] = {}  # path, fd (once a test was recorded), noted identities
_RANK = {"PASSED": 0, "SKIPPED": 1, "FAILED": 2, "ERROR": 3}
_seen: dict[str, tuple[str, str | None]] = {}
_PASSED = ("PASSED", None)


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
    for module, owner in (("unittest.result", "TestResult"), ("unittest.runner", "TextTestResult"),
                          ("unittest.case", "TestCase")):
        cls = getattr(sys.modules.get(module), owner, None)
        if cls is None:
            continue
        for name in ("run",) if owner == "TestCase" else _METHODS:
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
    _started()
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
            _started()
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
    _note()
    import atexit

    atexit.register(_write)


def _write() -> None:
    """One line per test: outcome, id and message, tab-separated (json would cost more to
    import than a quick suite takes to record), what changed, and the end mark: one write."""
    if _state.get("fd") is None or _state.get("pid") != os.getpid():
        return
    lines = [f"{o}\t{n}\t{_flat(m)}\n" for n, (o, m) in _seen.items()]
    lines += [f"{TAMPERED_MARK}\t{name}\n" for name in _changed()]
    try:
        _emit("".join(lines) + f"{END_MARK}\t{os.getpid()}\n")
        os.close(_state.pop("fd"))
    except OSError:
        pass  # the log still says what it can


def _flat(message: str | None) -> str:
    return "" if not message else message.replace("\t", " ").replace("\n", " ")


class _Finder:
    """Waits for `unittest.result` to be imported, then wraps its TestResult."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in ("unittest.result", "unittest.runner"):
            return None
        if name == "unittest.runner":
            sys.meta_path.remove(self)
        else:
            _state["path"], _state["pid"] = os.environ.pop(REPORT_ENV, None), os.getpid()
        from importlib.machinery import PathFinder  # loaded at start-up: importlib.util is not

        spec = PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            if name == "unittest.result":
                _wrap(module)
            else:
                _note()

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
