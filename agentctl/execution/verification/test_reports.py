"""Per-test results of a verification command, without asking anyone to change the command.

pytest is asked for a JUnit report through `PYTEST_ADDOPTS` (into a private directory outside
the workspace, so it can never end up in a patch or be mistaken for the project's own), and
unittest names every test through a `sitecustomize` on PYTHONPATH (`unittest_report`); JUnit
XML that Maven Surefire, Gradle or any other tool wrote during the run is read where those tools
put it; `go test -json` and unittest are read from the command's log. Everything is parsed into
one `TestReport` of test ids a runner can rerun: pytest node ids, unittest ids, `Class.method`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import re
import shlex
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentctl.domain.ansi import strip_ansi
from agentctl.domain.enums import TestOutcome
from agentctl.domain.verification import TestReport, TestResult
from agentctl.execution.verification.plugin_reports import (
    UNITTEST_LOG,
    HeldReports,
    PytestRun,
    UnittestHookRun,
    read_pytest_run,
    read_unittest_run,
)
from agentctl.execution.verification.pytest_plugins import (
    REPORT_ENV,
    REPORT_PLUGIN,
    REPORT_SOURCE,
    RERUN_ENV,
    SELECT_ENV,
    SELECT_PLUGIN,
    SELECT_SOURCE,
)
from agentctl.execution.verification.report_formats import (
    MAX_REPORT_BYTES,
    UnittestRun,
    parse_go_json,
    parse_junit,
    parse_unittest,
)
from agentctl.execution.verification.unittest_report import REPORT_ENV as UNITTEST_ENV
from agentctl.execution.verification.unittest_report import RERUN_ENV as UNITTEST_RERUN_ENV
from agentctl.execution.verification.unittest_report import SELECT_ENV as UNITTEST_SELECT_ENV

MAX_LOG_LINE = 1 << 16
PYTEST_REPORT = "pytest-junit.xml"
PYTEST_JSON = "pytest-results.json"
SELECTED_TESTS = "selected-tests.txt"
UNITTEST_HOOK = Path(__file__).with_name("unittest_report.py")
# Where build tools write JUnit XML, relative to the workspace (and one module level down).
JUNIT_GLOBS = (
    "target/surefire-reports/*.xml", "target/failsafe-reports/*.xml",
    "build/test-results/**/*.xml", "*/target/surefire-reports/*.xml",
    "*/build/test-results/**/*.xml", "*.xml", "reports/**/*.xml", "test-results/**/*.xml",
    "test-reports/**/*.xml", "junit/**/*.xml",
)

# What pytest prints when our plugin cannot be imported (PYTHONPATH dropped by a wrapper).
_PLUGIN_MISSING = re.compile(r"Error importing plugin .?" + REPORT_PLUGIN
                             + r"|No module named .?" + REPORT_PLUGIN)
# A command that assigns PYTHONPATH itself (`PYTHONPATH=src pytest`, `export PYTHONPATH=...`)
# without keeping the one it was given (`$PYTHONPATH`): our plugins would not load.
_SETS_PYTHONPATH = re.compile(r"(?:^|[\s;&|(`])PYTHONPATH=")
_KEEPS_PYTHONPATH = re.compile(r"\$\{?PYTHONPATH\b")
_LEADING_PYTHONPATH = re.compile(r"\s*PYTHONPATH=(?P<value>[\w./:+-]*)[ \t]+(?P<rest>\S.*)", re.S)
_NOT_ONE_COMMAND = re.compile(r"[;&|()`{}\n]|\$\(")
# PYTEST_ADDOPTS is one environment string: Linux takes at most 128 KiB for it.
MAX_DESELECT_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class Selection:
    """Which tests a rerun runs: `only` these ids, named in a file of the report folder (never
    on the command line, which has limits of its own) that the selecting pytest plugin and the
    unittest hook read; where no plugin of ours can load (the command sets PYTHONPATH itself),
    through pytest's `--deselect` of `others` (every other test of the first run). Empty: all
    of them."""

    only: tuple[str, ...] = ()
    others: tuple[str, ...] = ()


EVERY_TEST = Selection()


def selection(report_ids: Iterable[str], wanted: Sequence[str]) -> Selection:
    """`wanted` of a run that reported `report_ids`. pytest deselects by prefix, so a test whose
    id begins another wanted one's is kept (it runs too: harmless); none are deselected when
    they would not fit in the environment (the whole command runs again)."""
    keep = set(wanted)
    others = tuple(t for t in dict.fromkeys(report_ids)
                   if t not in keep and not any(w.startswith(t) for w in keep))
    if sum(len(t) + 14 for t in others) > MAX_DESELECT_CHARS:
        others = ()
    return Selection(tuple(wanted), others)


def lifted_pythonpath(command: str) -> tuple[str, str] | None:
    """`PYTHONPATH=src pytest -q` as the value and the command it is given to, where that is
    one simple command and the value a plain word: the value then goes into the environment,
    where our plugins' folder can be put beside it, and the command means the same."""
    match = _LEADING_PYTHONPATH.match(command)
    if match is None or _NOT_ONE_COMMAND.search(match["rest"]) or \
            _SETS_PYTHONPATH.search(match["rest"]):
        return None
    return match["value"], match["rest"]


def with_lifted_pythonpath(command: str,
                           env: Mapping[str, str]) -> tuple[str, Mapping[str, str]]:
    """`command` and `env`, with the value `lifted_pythonpath` finds moved into `env`."""
    lifted = lifted_pythonpath(command)
    if lifted is None:
        return command, env
    value, rest = lifted
    return rest, {**env, "PYTHONPATH": value}


def sets_pythonpath(command: str) -> bool:
    """Whether `command` replaces PYTHONPATH (so not even its pytest sees our plugins): then it
    is asked for pytest's own JUnit report at once instead of failing to load them first."""
    return bool(_SETS_PYTHONPATH.search(command)) and not _KEEPS_PYTHONPATH.search(command)


@dataclass(frozen=True, slots=True)
class ReportDir:
    """A check's private directory for what its runner reports (outside the workspace)."""

    path: Path

    @property
    def pytest_report(self) -> Path:
        return self.path / PYTEST_REPORT

    @property
    def pytest_json(self) -> Path:
        return self.path / PYTEST_JSON

    @property
    def selected_tests(self) -> Path:
        return self.path / SELECTED_TESTS

    def worker_reruns(self) -> list[Path]:
        """What each xdist worker's reruns of its failing tests saw."""
        return sorted(self.path.glob(f"{PYTEST_JSON}.*"))

    def prepare(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        self.pytest_report.unlink(missing_ok=True)
        self.pytest_json.unlink(missing_ok=True)
        self.selected_tests.unlink(missing_ok=True)
        for stale in (self.unittest_log, *self.worker_reruns()):
            stale.unlink(missing_ok=True)
        for name, text in ((f"{SELECT_PLUGIN}.py", SELECT_SOURCE),
                           (f"{REPORT_PLUGIN}.py", REPORT_SOURCE),
                           ("sitecustomize.py", UNITTEST_HOOK.read_text(encoding="utf-8"))):
            if _write_once(self.path / name, text):
                _compile(self.path / name, text)

    @property
    def unittest_log(self) -> Path:
        """Where the unittest hook of every Python process that ran tests appends them."""
        return self.path / UNITTEST_LOG

    def hold(self) -> HeldReports:
        """Both plugin reports, emptied and held open by agentctl for one run."""
        return HeldReports(self.pytest_json, self.unittest_log)


def _write_once(path: Path, text: str) -> bool:
    """Rewritten only when it differs: an unchanged file keeps its mtime, so the runner's
    Python reuses the bytecode it compiled for it on the run before (a rerun, a base run).
    Whether it was written."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    path.write_text(text, encoding="utf-8")
    return True


# Each helper's bytecode as first compiled in this process, by its file name and text
_BYTECODE: dict[tuple[str, str], bytes] = {}
# where the helpers' bytecode is kept between processes: beside the package's own, as Python
# keeps it (-O and PYTHONPYCACHEPREFIX place it as they place bytecode)
KEPT_BYTECODE = Path(importlib.util.cache_from_source(str(Path(__file__).with_name("helpers.py"))))
_HASH_CHECKED = (0b11).to_bytes(4, "little")  # PEP 552: hash-based, checked against the source


def _compile(source: Path, text: str, kept: Path | None = None) -> None:
    """A helper's bytecode beside it, checked by the source's hash: every Python the check
    starts imports the unittest hook, and with PYTHONDONTWRITEBYTECODE (the sandbox's default) each one would
    compile it again. A runner of another Python version compiles it as before. Compiled once
    (~7 ms for the three helpers), kept in this process and in a file beside the package's
    bytecode (`kept`, one a helper name), then copied into each check's folder: the bytes name
    no folder (the import gives the code the path it loaded the source from)."""
    target = Path(importlib.util.cache_from_source(str(source)))
    kept = (kept or KEPT_BYTECODE).with_suffix(f".{source.stem}.pyc")
    known = _BYTECODE.get((source.name, text)) or _kept_for(kept, text)
    try:
        if known is not None:
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(known)
            _BYTECODE[(source.name, text)] = known
            return
        py_compile.compile(str(source), cfile=str(target), doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        _BYTECODE[(source.name, text)] = compiled = target.read_bytes()
    except (OSError, py_compile.PyCompileError):
        return  # the runner compiles it itself
    _keep(kept, compiled)


def _kept_for(kept: Path, text: str) -> bytes | None:
    """The bytecode kept in `kept`, if it is this Python's, checked by hash, for `text`."""
    try:
        data = kept.read_bytes()
    except OSError:
        return None
    header = importlib.util.MAGIC_NUMBER + _HASH_CHECKED + importlib.util.source_hash(
        text.encode("utf-8"))
    return data if data[:16] == header else None


def _keep(kept: Path, compiled: bytes) -> None:
    """Write `compiled` to `kept` whole or not at all; not where Python writes no bytecode
    (PYTHONDONTWRITEBYTECODE, -B) or cannot (a package folder the user may not write)."""
    if sys.dont_write_bytecode:
        return
    partial = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(compiled)
        os.replace(partial, kept)
    except OSError:
        partial.unlink(missing_ok=True)


def injected_env(env: Mapping[str, str], reports: ReportDir,
                 select: Selection = EVERY_TEST, *, junit: bool = False,
                 rerun_failures: int = 0) -> dict[str, str]:
    """`env` with pytest asked, through PYTEST_ADDOPTS, for each test's outcome: by agentctl's
    small plugin (found through PYTHONPATH), or with `junit` by pytest's own JUnit report
    (xunit1, which names each test's file so node ids can be rebuilt). For a rerun, only the
    `select`ed tests run: named in a file of `reports` that the selecting plugin and the
    unittest hook read, or with `junit` (no plugin of ours loads) by deselecting the others.
    The plugin and the hook rerun each failing test up to `rerun_failures` times in the same
    process (`reran_in_process`)."""
    result = dict(env)
    # a module that cannot be imported fails and the others still run, each test with an
    # outcome of its own: pytest stops at the first collection error otherwise
    if junit:
        options = [f"--junitxml={reports.pytest_report}", "-o", "junit_family=xunit1",
                   "--continue-on-collection-errors"]
        options += [f"--deselect={test_id}" for test_id in select.others]
    else:
        options = ["-p", REPORT_PLUGIN, "--continue-on-collection-errors"]
        result[REPORT_ENV] = str(reports.pytest_json)
        result[UNITTEST_ENV] = str(reports.unittest_log)
        # each runner's own variables: pytest imports unittest (and the hook takes its
        # variables out of the environment) before it loads its plugins
        if rerun_failures:
            result[RERUN_ENV] = result[UNITTEST_RERUN_ENV] = str(rerun_failures)
        if select.only:
            options += ["-p", SELECT_PLUGIN]
            reports.path.mkdir(parents=True, exist_ok=True)
            reports.selected_tests.write_text("".join(f"{t}\n" for t in select.only),
                                              encoding="utf-8")
            result[SELECT_ENV] = result[UNITTEST_SELECT_ENV] = str(reports.selected_tests)
    if not junit:
        result["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(reports.path), env.get("PYTHONPATH", "")) if p)
    result["PYTEST_ADDOPTS"] = " ".join(p for p in (env.get("PYTEST_ADDOPTS", ""),
                                                    *(_quoted(o) for o in options)) if p)
    return result


def collect(*, workspace: Path, reports: ReportDir, log: Path, since_ns: int,
            junit_xml: str | None = None, pytest_run: PytestRun | None = None,
            unittest_run: UnittestHookRun | None = None) -> TestReport | None:
    """Every per-test result the run left: pytest's injected report (`pytest_run`, as read
    through agentctl's own descriptor; else from its path), JUnit XML written since `since_ns`
    where build tools put it (and `junit_xml`, the plan's own path), go test -json and unittest
    from the log. None when no runner said anything per test. A pytest report its process
    never finished, or one whose runner was changed, is no report."""
    found: dict[str, TestResult] = {}
    runners: list[str] = []

    def add(runner: str, results: list[TestResult]) -> None:
        if results:
            runners.append(runner)
            for result in results:
                found.setdefault(result.test_id, result)

    if pytest_run is None:
        pytest_run = read_pytest_run(reports.pytest_json)
    if pytest_run.sessions and pytest_run.trusted:
        add("pytest", list(pytest_run.results))
        if not pytest_run.results:
            runners.append("pytest")  # pytest ran and found no test: 0 is a count too
    elif reports.pytest_report.is_file():
        add("pytest", _readable(reports.pytest_report, pytest_ids=True, root=workspace))
    for path in _written_junit(workspace, since_ns, junit_xml):
        add("junit", _readable(path, pytest_ids=False))
    if unittest_run is None:
        unittest_run = read_unittest_run(reports.unittest_log)
    if not found and unittest_run.trusted:
        add("unittest", list(unittest_run.results))
    unnamed = UnittestRun([])
    if not found:
        go, unnamed = _from_log(log)
        add("go", go)
        add("unittest", unnamed.results)
        if not found and unnamed.counted:
            runners.append("unittest")  # unittest ran and named no test: 0 is a count too
    if not runners:
        return None
    return TestReport(runner="+".join(dict.fromkeys(runners)), results=tuple(found.values()),
                      unnamed_passed=unnamed.unnamed_passed,
                      unnamed_skipped=unnamed.unnamed_skipped)


def plugin_missing(log_tail: str) -> bool:
    """Whether pytest failed to load agentctl's report plugin (a wrapper dropped PYTHONPATH but
    kept PYTEST_ADDOPTS): the run then says nothing about the code and is made again."""
    return bool(_PLUGIN_MISSING.search(log_tail))


def reran_in_process(reports: ReportDir, pytest_run: PytestRun | None = None,
                     unittest_run: UnittestHookRun | None = None,
                     ) -> dict[str, tuple[TestOutcome, ...]]:
    """What the report plugin's and the unittest hook's reruns of failing tests saw
    (`rerun_failures`), by test id: pytest's main process's, each xdist worker's, and each
    unittest process's."""
    reran: dict[str, tuple[TestOutcome, ...]] = dict(
        (pytest_run or read_pytest_run(reports.pytest_json)).reran)
    reran.update((unittest_run or read_unittest_run(reports.unittest_log)).reran)
    try:
        for worker in reports.worker_reruns():
            reran.update((str(test_id), tuple(TestOutcome(o) for o in outcomes))
                         for test_id, outcomes in (_bounded_json(worker) or {}).items())
    except (OSError, ValueError, TypeError, IndexError, AttributeError):
        return {}
    return reran


def _bounded_json(path: Path) -> Any:
    """What a runner wrote as JSON into `path`; None past MAX_REPORT_BYTES (not read)."""
    if path.stat().st_size > MAX_REPORT_BYTES:
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _readable(path: Path, *, pytest_ids: bool, root: Path | None = None) -> list[TestResult]:
    try:
        return parse_junit(path, pytest_ids=pytest_ids, root=root)
    except (SyntaxError, OSError, ValueError, AttributeError):
        return []  # not a JUnit report (any other XML), or a broken one: the log still counts


def _written_junit(workspace: Path, since_ns: int, junit_xml: str | None) -> list[Path]:
    """JUnit-looking XML files written (or rewritten) during the run; a stale one committed in
    the repository proves nothing about this run."""
    candidates: dict[Path, None] = {}
    if junit_xml:
        candidates[(workspace / junit_xml).absolute()] = None
    for pattern in JUNIT_GLOBS:
        for path in sorted(workspace.glob(pattern)):
            candidates.setdefault(path, None)
    written: list[Path] = []
    for path in candidates:
        try:
            stat = path.lstat()
        except OSError:
            continue
        if path.is_file() and not path.is_symlink() and stat.st_mtime_ns >= since_ns \
                and _looks_junit(path):
            written.append(path)
    return written


def _looks_junit(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return b"<testsuite" in head


def _from_log(log: Path) -> tuple[list[TestResult], UnittestRun]:
    def lines() -> Iterator[str]:
        with open(log, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                yield strip_ansi(line[:MAX_LOG_LINE].rstrip("\n"))

    try:
        return parse_go_json(lines()), parse_unittest(lines())
    except OSError:
        return [], UnittestRun([])


def _quoted(option: str) -> str:
    """PYTEST_ADDOPTS is split shell-style: a path with a space must stay one word."""

    return shlex.quote(option)
